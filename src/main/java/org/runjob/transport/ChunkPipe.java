package org.runjob.transport;

import java.io.IOException;
import java.io.InputStream;
import java.io.OutputStream;
import java.util.Arrays;
import java.util.concurrent.ArrayBlockingQueue;
import java.util.concurrent.BlockingQueue;

/**
 * A pipe from JSch's session thread to a reader thread, in chunks: the writer copies each write
 * into the queue (blocking only when {@value #CHUNKS} chunks are waiting), the reader takes them in
 * order. It replaces JSch's 32 KiB piped stream, which hands data over in small steps.
 */
final class ChunkPipe {

    static final int CHUNKS = 256;
    private static final byte[] END = new byte[0];

    private final BlockingQueue<byte[]> chunks = new ArrayBlockingQueue<>(CHUNKS);

    final OutputStream sink = new OutputStream() {
        private boolean closed;

        @Override
        public void write(int b) throws IOException {
            write(new byte[] {(byte) b}, 0, 1);
        }

        @Override
        public void write(byte[] b, int off, int len) throws IOException {
            if (closed) {
                throw new IOException("pipe closed");
            }
            if (len > 0) {
                put(Arrays.copyOfRange(b, off, off + len));
            }
        }

        @Override
        public void close() throws IOException {
            if (!closed) {
                closed = true;
                put(END);
            }
        }

        private void put(byte[] chunk) throws IOException {
            try {
                chunks.put(chunk);
            } catch (InterruptedException e) {
                Thread.currentThread().interrupt();
                throw new IOException("interrupted", e);
            }
        }
    };

    final InputStream source = new InputStream() {
        private byte[] current = new byte[0];
        private int pos;
        private boolean ended;

        @Override
        public int read() throws IOException {
            byte[] one = new byte[1];
            return read(one, 0, 1) < 0 ? -1 : one[0] & 0xff;
        }

        @Override
        public int read(byte[] b, int off, int len) throws IOException {
            if (len == 0) {
                return 0;
            }
            while (pos == current.length) {
                if (ended) {
                    return -1;
                }
                try {
                    current = chunks.take();
                } catch (InterruptedException e) {
                    Thread.currentThread().interrupt();
                    throw new IOException("interrupted", e);
                }
                pos = 0;
                if (current == END) {
                    ended = true;
                    return -1;
                }
            }
            int n = Math.min(len, current.length - pos);
            System.arraycopy(current, pos, b, off, n);
            pos += n;
            return n;
        }
    };
}
