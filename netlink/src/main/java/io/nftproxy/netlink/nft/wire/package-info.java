/**
 * The nf_tables netlink codec: every object of the model to its message and back
 * ({@link io.nftproxy.netlink.nft.wire.NftCodec}; the expressions encode and decode themselves in
 * {@code nft.expr}), and the kernel's trace messages ({@link io.nftproxy.netlink.nft.wire.TraceCodec}).
 * Pure functions of bytes; input from the kernel is checked and refused with a reason.
 */
package io.nftproxy.netlink.nft.wire;
