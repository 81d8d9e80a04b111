/**
 * The nf_tables object model: tables, chains, rules and their expressions ({@code expr}), sets and
 * their elements, verdicts, and the {@link io.nftproxy.netlink.nft.Transaction} — an ordered list
 * of operations on these values — with what a program asks of the kernel
 * ({@link io.nftproxy.netlink.nft.NftKernel}, {@link io.nftproxy.netlink.nft.CounterReader}).
 * Plain values: nothing here does I/O.
 *
 * <p>The layers above it, each depending only on the ones before:
 * {@code wire} (messages to and from the kernel), {@code client} (a netlink socket that commits
 * transactions and reads tables back), {@code monitor} (the kernel's events and traces).
 * {@code print} writes the model as nft's text; the model's own {@code toString} uses it, so that a
 * transaction in a log or an error reads as {@code nft -f} input.
 */
package io.nftproxy.netlink.nft;
