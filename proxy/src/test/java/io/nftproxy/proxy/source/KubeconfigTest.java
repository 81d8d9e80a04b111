package io.nftproxy.proxy.source;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertThrows;
import static org.junit.jupiter.api.Assertions.assertTrue;

import java.nio.file.Files;
import java.nio.file.Path;

import io.fabric8.kubernetes.client.Config;
import org.junit.jupiter.api.Test;

import io.nftproxy.proxy.ManualClock;
import org.junit.jupiter.api.io.TempDir;

/** A kubeconfig as a node's components read it: errors naming the file, --master over it, a rotated token file. */
class KubeconfigTest {
    static Path kubeconfig(Path dir, String user) throws Exception {
        Path k = dir.resolve("kubeconfig");
        Files.writeString(k, """
                apiVersion: v1
                kind: Config
                clusters: [{name: c, cluster: {server: "https://10.0.0.1:6443", insecure-skip-tls-verify: true}}]
                contexts: [{name: x, context: {cluster: c, user: u}}]
                current-context: x
                users: [{name: u, user: %s}]
                """.formatted(user));
        return k;
    }

    @Test
    void aRotatedTokenIsReadAgainWithinAMinute(@TempDir Path dir) throws Exception {
        Path token = dir.resolve("token");
        Files.writeString(token, "first\n");
        ManualClock clock = new ManualClock();
        Kubeconfig.TokenFile tokens = new Kubeconfig.TokenFile(token, clock);
        assertEquals("first", tokens.getToken());
        Files.writeString(token, "second\n"); // the kubelet rotates the projected token
        assertEquals("first", tokens.getToken(), "read at most once a minute");
        clock.now = clock.now.plusSeconds(61);
        assertEquals("second", tokens.getToken());
        Files.delete(token);
        clock.now = clock.now.plusSeconds(61);
        assertEquals("second", tokens.getToken(), "a failed read keeps the token it has");
    }

    @Test
    void theServerTheTokenFileAndMasterOverIt(@TempDir Path dir) throws Exception {
        Files.writeString(dir.resolve("token"), "abc\n");
        Path k = kubeconfig(dir, "{tokenFile: token}"); // relative to the kubeconfig's directory
        Config cfg = Kubeconfig.load(k, null);
        assertEquals("https://10.0.0.1:6443/", cfg.getMasterUrl());
        assertEquals("abc", cfg.getOauthTokenProvider().getToken());
        assertEquals("https://10.0.0.2:6443/", Kubeconfig.load(k, "https://10.0.0.2:6443").getMasterUrl());
    }

    @Test
    void whatIsWrongIsSaidWithTheFile(@TempDir Path dir) throws Exception {
        Path k = kubeconfig(dir, "{}");
        Files.writeString(k, Files.readString(k).replace("current-context: x", "current-context: y"));
        Kubeconfig.InvalidKubeconfigException e = assertThrows(Kubeconfig.InvalidKubeconfigException.class,
                () -> Kubeconfig.load(k, null));
        assertEquals("kubeconfig " + k + ": no context named 'y'", e.getMessage());
        Files.writeString(k, "clusters: [");
        e = assertThrows(Kubeconfig.InvalidKubeconfigException.class, () -> Kubeconfig.load(k, null));
        assertTrue(e.getMessage().startsWith("kubeconfig " + k + " does not parse: "), e.getMessage());
        e = assertThrows(Kubeconfig.InvalidKubeconfigException.class, () -> Kubeconfig.load(null, null));
        assertEquals("neither a kubeconfig nor --master gives the API server", e.getMessage());
    }
}
