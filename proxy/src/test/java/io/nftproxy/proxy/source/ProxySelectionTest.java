package io.nftproxy.proxy.source;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertThrows;

import java.util.HashMap;
import java.util.Map;

import org.junit.jupiter.api.Test;
import org.junit.jupiter.params.ParameterizedTest;
import org.junit.jupiter.params.provider.CsvSource;

/** kube-proxy's label selection, in a table: labels of an object, the proxy's name, ours or not. */
class ProxySelectionTest {
    @ParameterizedTest(name = "labels [{0}], proxy name [{1}] -> {2}")
    @CsvSource(delimiter = '|', nullValues = "-", value = {
        // labels (k=v;k=v)                                          | proxy name | selected
        "-                                                            | -          | true",
        "kubernetes.io/service-name=web                               | -          | true",
        "service.kubernetes.io/service-proxy-name=other               | -          | false",
        "service.kubernetes.io/service-proxy-name=                    | -          | false",
        "service.kubernetes.io/headless=                              | -          | false",
        "-                                                            | nftproxy   | false",
        "kubernetes.io/service-name=web                               | nftproxy   | false",
        "service.kubernetes.io/service-proxy-name=nftproxy            | nftproxy   | true",
        "service.kubernetes.io/service-proxy-name=other               | nftproxy   | false",
        "service.kubernetes.io/service-proxy-name=nftproxy;service.kubernetes.io/headless= | nftproxy | false",
    })
    void selects(String labels, String proxyName, boolean selected) {
        Map<String, String> l = null;
        if (labels != null) {
            l = new HashMap<>();
            for (String kv : labels.split(";")) {
                String[] p = kv.split("=", -1);
                l.put(p[0].trim(), p[1].trim());
            }
        }
        assertEquals(selected, new ProxySelection(proxyName).selects(l));
    }

    @ParameterizedTest
    @CsvSource(delimiter = '|', nullValues = "-", value = {
        "-        | !service.kubernetes.io/service-proxy-name,!service.kubernetes.io/headless",
        "nftproxy | service.kubernetes.io/service-proxy-name=nftproxy,!service.kubernetes.io/headless",
    })
    void labelSelectorsForTheApiServer(String proxyName, String selector) {
        assertEquals(selector, new ProxySelection(proxyName).labelSelector());
    }

    @Test
    void anEmptyNameIsRefused() {
        assertThrows(IllegalArgumentException.class, () -> new ProxySelection(" "));
    }
}
