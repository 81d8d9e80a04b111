/**
 * The model as nft's text: operations as {@code nft -f} reads them, table listings as
 * {@code nft list table} prints them, values by their data type. Used for logs, errors, dumps
 * and tests; never on the path that programs the kernel.
 */
package io.nftproxy.netlink.nft.print;
