package org.runjob.agent;

import java.io.IOException;
import java.io.InputStream;
import java.io.PrintStream;
import java.net.InetAddress;
import java.net.InetSocketAddress;
import java.net.NetworkInterface;
import java.net.ServerSocket;
import java.net.Socket;

/**
 * Rendezvous checks run on a node ({@code runjob probe ...}), one line of answer each:
 *
 * <ul>
 *   <li>{@code probe gpus}: the node's {@link org.runjob.agent.gpu.GpuInventory} as one line of JSON.</li>
 *   <li>{@code probe listen ADDR PORT}: binds PORT (0: any free port) on all addresses, as rank 0's
 *       store will, prints {@code listening PORT IFACE} (IFACE: the interface holding ADDR, or
 *       {@code -}) or {@code failed REASON}, then accepts connections until its stdin closes.</li>
 *   <li>{@code probe connect ADDR PORT TIMEOUT_MS}: connects, prints {@code connected IFACE} (the
 *       interface the route to ADDR leaves by: what GLOO_SOCKET_IFNAME / NCCL_SOCKET_IFNAME should
 *       name) or {@code failed REASON}.</li>
 * </ul>
 */
public final class Probe {

    private Probe() {
    }

    public static int main(String[] args, InputStream stdin, PrintStream out) {
        try {
            if (args.length == 3 && args[0].equals("listen")) {
                return listen(args[1], Integer.parseInt(args[2]), stdin, out);
            }
            if (args.length == 1 && args[0].equals("gpus")) {
                out.println(new org.runjob.agent.gpu.JCudaProbe().probe().toJson());
                out.flush();
                return 0;
            }
            if (args.length == 4 && args[0].equals("connect")) {
                out.println(connect(args[1], Integer.parseInt(args[2]), Integer.parseInt(args[3])));
                out.flush();
                return 0;
            }
        } catch (NumberFormatException e) {
            // usage below
        }
        out.println("failed usage: probe gpus | probe listen ADDR PORT | probe connect ADDR PORT TIMEOUT_MS");
        return 2;
    }

    private static int listen(String addr, int port, InputStream stdin, PrintStream out) {
        try (ServerSocket server = listen(port)) {
            out.println("listening " + server.getLocalPort() + " " + interfaceHolding(addr));
            out.flush();
            while (stdin.read() >= 0) {
                // wait for the coordinator to close our stdin
            }
            return 0;
        } catch (IOException e) {
            out.println("failed port " + port + " cannot be bound: " + e.getMessage());
            out.flush();
            return 1;
        }
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

    /** "connected IFACE" or "failed REASON". */
    public static String connect(String addr, int port, int timeoutMs) {
        try (Socket s = new Socket()) {
            s.connect(new InetSocketAddress(addr, port), timeoutMs);
            NetworkInterface nic = NetworkInterface.getByInetAddress(s.getLocalAddress());
            return "connected " + (nic == null ? "-" : nic.getName());
        } catch (IOException e) {
            return "failed " + e.getMessage();
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
