package org.runjob.agent;

import java.io.IOException;
import java.io.RandomAccessFile;
import java.nio.ByteBuffer;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.ArrayDeque;

import org.runjob.protocol.Frame;

/**
 * A first-in first-out queue of frames that never blocks the producer and never drops: frames are
 * kept in memory up to a byte limit, then appended to a spill file, and handed out in order.
 *
 * <p>Order rule: a frame goes to memory only while the spill file holds no unread frame, so every
 * frame in memory is older than every frame in the file. {@link #take} empties memory first, then
 * the file; once the file is read to its end it is truncated and memory is used again.
 *
 * <p>Liveness apart from data: a PONG is never queued behind output. It goes to a lane of its
 * own that {@link #take} empties before anything else, so a coordinator that reads slowly (a
 * console that stops, a loaded machine) gets the agent's answer with the next frame it reads, not
 * after every byte the workers printed before it. PONGs carry no order with other frames.
 */
final class Spool implements AutoCloseable {

    private final long memoryLimit;
    private final Path spillDir;
    private final ArrayDeque<Frame> memory = new ArrayDeque<>();
    /** The PONGs not yet taken: a few at most (one per PING). */
    private final ArrayDeque<Frame> urgent = new ArrayDeque<>();
    private long memoryBytes;
    private RandomAccessFile spill;
    private Path spillPath;
    private long readPos;
    private long spilledFrames;
    private long spilledBytesTotal;
    private boolean closed;
    /** A frame's header on the wire and in the spill file: type, rank, payload length. */
    private static final int HEADER = 9;

    Spool(long memoryLimit, Path spillDir) {
        this.memoryLimit = memoryLimit;
        this.spillDir = spillDir;
    }

    synchronized void put(Frame frame) throws IOException {
        if (closed) {
            return;
        }
        if (frame.type() == Frame.Type.PONG) {
            urgent.add(frame);
        } else if (spilledFrames == 0 && memoryBytes + frame.payload().length <= memoryLimit) {
            memory.add(frame);
            memoryBytes += frame.payload().length;
        } else {
            if (spill == null) {
                spillPath = Files.createTempFile(spillDir, "runjob-spool-", ".bin");
                spill = new RandomAccessFile(spillPath.toFile(), "rw");
            }
            // one write per frame, header and payload together (no stream, no buffer to fill and throw away)
            byte[] bytes = new byte[HEADER + frame.payload().length];
            ByteBuffer.wrap(bytes).put((byte) frame.type().code()).putInt(frame.rank()).putInt(frame.payload().length)
                    .put(frame.payload());
            spill.seek(spill.length());
            spill.write(bytes);
            spilledFrames++;
            spilledBytesTotal += frame.payload().length;
        }
        notifyAll();
    }

    /** The oldest frame, waiting up to {@code timeoutMs}; null when none came (or the spool closed). */
    synchronized Frame take(long timeoutMs) throws IOException, InterruptedException {
        long deadline = System.currentTimeMillis() + timeoutMs;
        while (urgent.isEmpty() && memory.isEmpty() && spilledFrames == 0 && !closed) {
            long left = deadline - System.currentTimeMillis();
            if (left <= 0) {
                return null;
            }
            wait(left);
        }
        if (!urgent.isEmpty()) {
            return urgent.poll();
        }
        if (!memory.isEmpty()) {
            Frame f = memory.poll();
            memoryBytes -= f.payload().length;
            return f;
        }
        if (spilledFrames == 0) {
            return null;
        }
        // exactly this frame's bytes: a buffered stream here read 64 KiB for every (often 8 KiB) frame
        spill.seek(readPos);
        byte[] header = new byte[HEADER];
        spill.readFully(header);
        ByteBuffer h = ByteBuffer.wrap(header);
        Frame.Type type = Frame.Type.of(h.get() & 0xff);
        int rank = h.getInt();
        byte[] payload = new byte[h.getInt()];
        spill.readFully(payload);
        Frame f = new Frame(type, rank, payload);
        readPos += HEADER + payload.length;
        if (--spilledFrames == 0) {
            spill.setLength(0);
            readPos = 0;
        }
        return f;
    }

    synchronized boolean isEmpty() {
        return urgent.isEmpty() && memory.isEmpty() && spilledFrames == 0;
    }

    /** Bytes of output that ever went through the spill file (for diagnostics and tests). */
    synchronized long spilledBytesTotal() {
        return spilledBytesTotal;
    }

    @Override
    public synchronized void close() throws IOException {
        closed = true;
        notifyAll();
        if (spill != null) {
            spill.close();
            Files.deleteIfExists(spillPath);
        }
    }
}
