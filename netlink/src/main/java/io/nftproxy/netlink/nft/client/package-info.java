/**
 * The kernel's nf_tables over a netlink socket: commits a transaction as batches of messages,
 * reads tables and counters back. The only package of the model that does I/O on the request
 * path; the socket itself is {@code io.nftproxy.ffi}'s.
 */
package io.nftproxy.netlink.nft.client;
