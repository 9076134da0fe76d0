package org.runjob.session;

import java.util.List;
import java.util.Optional;

import org.runjob.distribute.FileList;
import org.runjob.distribute.Shipped;
import org.runjob.protocol.FileManifest;

/** What a node's agent answered a file list with ({@link FileShipment#offer}): the manifest, and per file whether it needs it. */
public record FileOffer(List<FileList.Entry> files, List<FileManifest.Entry> entries, List<Boolean> needs) {
    public FileOffer {
        files = List.copyOf(files);
        entries = List.copyOf(entries);
        needs = List.copyOf(needs);
    }

    /** The bytes the node lacks. */
    public long neededBytes() {
        long n = 0;
        for (int i = 0; i < entries.size(); i++) {
            n += needs.get(i) ? entries.get(i).size() : 0;
        }
        return n;
    }

    /** What a transfer of exactly the needed files did. */
    Shipped shipped(Optional<String> relayedBy) {
        int files = (int) needs.stream().filter(b -> b).count();
        long sent = neededBytes();
        long total = entries.stream().mapToLong(FileManifest.Entry::size).sum();
        return new Shipped(sent, total - sent, files, entries.size() - files, relayedBy);
    }
}
