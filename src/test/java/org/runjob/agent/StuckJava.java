package org.runjob.agent;

/** A JVM worker that prints "ready" and then waits in {@link #waitingHere} until killed. */
public final class StuckJava {

    private StuckJava() {
    }

    static void waitingHere() throws InterruptedException {
        while (true) {
            Thread.sleep(50);
        }
    }

    public static void main(String[] args) throws InterruptedException {
        System.out.println("ready");
        System.out.flush();
        waitingHere();
    }
}
