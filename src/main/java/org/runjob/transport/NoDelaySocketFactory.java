package org.runjob.transport;

import java.io.IOException;
import java.io.InputStream;
import java.io.OutputStream;
import java.net.InetSocketAddress;
import java.net.Socket;

import com.jcraft.jsch.SocketFactory;

/**
 * TCP sockets for SSH with TCP_NODELAY (no delayed-ACK stalls on small frames) and a connect
 * timeout; it remembers whether a connection was made, so a slow SSH handshake (the host answers,
 * under load) is told apart from a host that does not answer at all.
 */
final class NoDelaySocketFactory implements SocketFactory {

    private final int timeoutMs;
    private volatile boolean connected;

    NoDelaySocketFactory(int timeoutMs) {
        this.timeoutMs = timeoutMs;
    }

    @Override
    public Socket createSocket(String host, int port) throws IOException {
        Socket s = new Socket();
        s.setTcpNoDelay(true);
        s.connect(new InetSocketAddress(host, port), timeoutMs);
        connected = true;
        return s;
    }

    /** True once a TCP connection was made: the host answers. */
    boolean connected() {
        return connected;
    }

    @Override
    public InputStream getInputStream(Socket socket) throws IOException {
        return socket.getInputStream();
    }

    @Override
    public OutputStream getOutputStream(Socket socket) throws IOException {
        return socket.getOutputStream();
    }
}
