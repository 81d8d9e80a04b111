/**
 * The kernel's nf_tables multicast groups: ruleset change events ({@code nft monitor}) and packet
 * traces ({@code nft monitor trace}), each read on a socket of its own.
 */
package io.nftproxy.netlink.nft.monitor;
