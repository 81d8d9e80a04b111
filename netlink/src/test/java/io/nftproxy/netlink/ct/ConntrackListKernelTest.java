package io.nftproxy.netlink.ct;

import static org.junit.jupiter.api.Assertions.assertEquals;

import java.util.Set;
import java.util.TreeSet;

import org.junit.jupiter.api.Test;

import io.nftproxy.testkit.TestNetns;

/**
 * A conntrack table of hundreds of entries is listed whole: the kernel's dump spans several
 * datagrams of up to 32 KiB, each of which fits the client's receive buffer (a truncated one
 * would be an error).
 */
class ConntrackListKernelTest {
    @Test
    void aDumpOfManyDatagramsIsListedWhole() throws Exception {
        int entries = 400; // about 60 KB of dump: two datagrams at least
        try (TestNetns ns = TestNetns.create("nftp-ct")) {
            ns.exec("bash", "-c", "for i in $(seq 1 " + entries + "); do conntrack -I -p udp -s 10.1.0.1 -d 10.2.0.1"
                    + " --sport $((10000 + i)) --dport 53 --timeout 600 2>/dev/null || exit 1; done");
            try (ConntrackClient ct = ConntrackClient.open(ns.ns())) {
                Set<Integer> sports = new TreeSet<>();
                for (ConntrackEntry e : ct.list(4)) {
                    if (e.origDport() == 53) {
                        sports.add(e.origSport());
                    }
                }
                assertEquals(entries, sports.size(), "source ports listed: " + sports);
                assertEquals(10001, sports.iterator().next());
            }
        }
    }
}
