package org.runjob.agent;

import static org.assertj.core.api.Assertions.assertThat;

import org.junit.jupiter.api.Test;

/** A failed image inspect says what failed: the daemon, the user's rights, or the image. */
class ImageCheckTest {

    @Test
    void aStoppedDaemonADeniedSocketAndAMissingImageAreToldApart() {
        String stopped = "Cannot connect to the Docker daemon at unix:///var/run/docker.sock. Is the docker daemon running?";
        assertThat(NodeEnvironment.inspectFailed("docker", "train:1", stopped)).isEqualTo("the docker daemon does not answer on this node"
                + " (docker image inspect: " + stopped + "): start it there (systemctl start docker)");
        String denied = "permission denied while trying to connect to the Docker daemon socket at unix:///var/run/docker.sock: Get"
                + " \"http://%2Fvar%2Frun%2Fdocker.sock/v1.24/images/train:1/json\": dial unix /var/run/docker.sock: connect: permission denied";
        assertThat(NodeEnvironment.inspectFailed("docker", "train:1", denied)).startsWith("this user may not use docker on this node (docker"
                + " image inspect: permission denied");
        String missing = "Error: No such image: train:1";
        assertThat(NodeEnvironment.inspectFailed("docker", "train:1", missing)).isEqualTo("image train:1 is not on this node (docker image"
                + " inspect: Error: No such image: train:1): pull or load it there");
        String podman = "Error: train:1: image not known";
        assertThat(NodeEnvironment.inspectFailed("podman", "train:1", podman)).isEqualTo("image train:1 is not on this node (podman image"
                + " inspect: Error: train:1: image not known): pull or load it there");
    }
}
