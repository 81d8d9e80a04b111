package io.nftproxy.proxy.kernel;

import java.lang.annotation.ElementType;
import java.lang.annotation.Retention;
import java.lang.annotation.RetentionPolicy;
import java.lang.annotation.Target;

/**
 * The Kubernetes e2e tests (kubernetes/test/e2e/network, "file: test name") whose behaviour a
 * cross-node test checks; {@link E2eTable} reports each of them per backend.
 */
@Retention(RetentionPolicy.RUNTIME)
@Target(ElementType.METHOD)
@interface E2e {
    String[] value();
}
