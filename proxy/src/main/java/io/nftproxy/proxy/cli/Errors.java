package io.nftproxy.proxy.cli;

import io.nftproxy.ffi.Errno;
import io.nftproxy.ffi.NativeException;
import io.nftproxy.netlink.nft.NftException;

/** Turns failures into messages that say what to do. */
final class Errors {
    private Errors() {
    }

    static String explain(Throwable t) {
        if (t instanceof NftException ne && ne.isPermissionDenied()
                && String.valueOf(ne.getMessage()).contains("setns")) {
            return ne.getMessage() + " -- entering a network namespace (--netns) needs CAP_SYS_ADMIN: run as root";
        }
        if (t instanceof NativeException ne && ne.errno() == Errno.EPERM && String.valueOf(ne.getMessage()).contains("setns")) {
            return ne.getMessage() + " -- entering a network namespace (--netns) needs CAP_SYS_ADMIN: run as root";
        }
        if (t instanceof NftException ne && ne.isPermissionDenied()) {
            return ne.getMessage() + " -- run as root or with CAP_NET_ADMIN";
        }
        if (t instanceof NativeException ne && ne.errno() == Errno.ENOENT
                && ne.getMessage().contains("/run/netns")) {
            return ne.getMessage() + " -- create it with 'ip netns add NAME' or check --netns";
        }
        if (t.getCause() instanceof NativeException ne && ne.errno() == Errno.ENOENT
                && t.getMessage().contains("/run/netns")) {
            return t.getMessage() + " -- create it with 'ip netns add NAME' or check --netns";
        }
        String m = t.getMessage();
        return m == null ? t.toString() : m;
    }
}
