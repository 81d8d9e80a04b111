package io.nftproxy.proxy.kernel;

import io.nftproxy.sandbox.Sandbox;
import io.nftproxy.testkit.Kernel;

/** The sandbox network for kernel tests, after the skip/fail rule for kernel tests. */
final class Topology extends Sandbox {
    Topology() {
        super(checked());
    }

    private static String checked() {
        Kernel.require();
        return "nftp";
    }
}
