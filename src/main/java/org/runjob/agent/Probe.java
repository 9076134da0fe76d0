package org.runjob.agent;

import java.io.IOException;
import java.io.InputStream;
import java.io.PrintStream;
import java.net.InetAddress;
import java.net.InetSocketAddress;
import java.net.NetworkInterface;
import java.net.ServerSocket;
import java.net.Socket;

import org.runjob.agent.gpu.JCudaProbe;
import org.runjob.protocol.Answer;

/**
 * The node-side checks: {@code probe gpus} (a child JVM of the agent: the node's
 * {@link org.runjob.protocol.GpuInventory} as one line), and, inside the agent, the
 * rendezvous checks: {@link #listen} binds PORT (0: any free port) on all addresses, as rank 0's store
 * will, and accepts until closed; {@link #connect} answers {@code connected IFACE} (the interface the
 * route to ADDR leaves by: what GLOO_SOCKET_IFNAME / NCCL_SOCKET_IFNAME should name) or
 * {@code failed REASON}.
 */
public final class Probe {

    private Probe() {
    }

    public static int main(String[] args, InputStream stdin, PrintStream out) {
        if (args.length == 1 && args[0].equals("gpus")) {
            out.println(new JCudaProbe().probe().toLine());
            out.flush();
            return 0;
        }
        out.println("failed usage: probe gpus");
        return 2;
    }

    /** Binds {@code port} (0: any free one) on all addresses, as rank 0's store will, and accepts until closed. */
    static ServerSocket listen(int port) throws IOException {
        ServerSocket server = new ServerSocket();
        server.setReuseAddress(true);
        try {
            server.bind(new InetSocketAddress(port));
        } catch (IOException e) {
            server.close();
            throw e;
        }
        Thread acceptor = new Thread(() -> {
            while (!server.isClosed()) {
                try (Socket s = server.accept()) {
                    s.getOutputStream().write('k');
                } catch (IOException e) {
                    // closed, or the peer went away
                }
            }
        }, "probe-accept");
        acceptor.setDaemon(true);
        acceptor.start();
        return server;
    }

    /** Connected, with the interface it went out of, or why not. */
    public static Answer connect(String addr, int port, int timeoutMs) {
        try (Socket s = new Socket()) {
            s.connect(new InetSocketAddress(addr, port), timeoutMs);
            NetworkInterface nic = NetworkInterface.getByInetAddress(s.getLocalAddress());
            return Answer.done(0, nic == null ? "-" : nic.getName());
        } catch (IOException e) {
            return Answer.failed(e.getMessage() == null ? e.getClass().getSimpleName() : e.getMessage());
        }
    }

    /** The interface that has {@code addr} as one of its own addresses, or "-". */
    public static String interfaceHolding(String addr) {
        try {
            NetworkInterface nic = NetworkInterface.getByInetAddress(InetAddress.getByName(addr));
            return nic == null ? "-" : nic.getName();
        } catch (IOException e) {
            return "-";
        }
    }

}
