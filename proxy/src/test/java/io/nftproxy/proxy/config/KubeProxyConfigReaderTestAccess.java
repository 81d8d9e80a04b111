package io.nftproxy.proxy.config;

import java.io.IOException;

/** kubeadm's rendered kube-proxy configuration, for tests in other packages. */
public final class KubeProxyConfigReaderTestAccess {
    private KubeProxyConfigReaderTestAccess() {
    }

    public static String kubeadmConfig() throws IOException {
        return KubeProxyConfigReaderTest.resource("config.conf");
    }

    public static String kubeadmKubeconfig() throws IOException {
        return KubeProxyConfigReaderTest.resource("kubeconfig.conf");
    }
}
