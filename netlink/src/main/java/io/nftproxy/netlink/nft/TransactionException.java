package io.nftproxy.netlink.nft;

import io.nftproxy.netlink.nft.print.NftPrinter;
import java.util.List;

/**
 * A batch the kernel rejected. Nothing of it was applied. Names the first failing operation by its
 * index and its nft form; {@link #failures()} lists every operation the kernel reported.
 */
public final class TransactionException extends NftException {
    /** One operation the kernel refused. {@code index} is -1 for a failure of the commit itself. */
    public record Failure(int index, Op op, int errno, String kernelMessage) {
    }

    private final List<Failure> failures;

    public TransactionException(List<Failure> failures, int totalOps) {
        super(describe(failures.get(0), totalOps), failures.get(0).errno(), failures.get(0).kernelMessage());
        this.failures = List.copyOf(failures);
    }

    private static String describe(Failure f, int totalOps) {
        if (f.index() < 0) {
            return "nf_tables commit of " + totalOps + " operations failed";
        }
        return "operation " + f.index() + " of " + totalOps + " failed [" + NftPrinter.operation(f.op()) + "]";
    }

    public List<Failure> failures() {
        return failures;
    }

    /** The first failing operation's index in the transaction, -1 if the commit itself failed. */
    public int index() {
        return failures.get(0).index();
    }

    public Op operation() {
        return failures.get(0).op();
    }
}
