package squall.node;

import java.nio.file.Files;
import java.nio.file.Path;
import java.util.Arrays;
import java.util.Collections;
import java.util.List;
import java.util.concurrent.CountDownLatch;
import java.util.concurrent.TimeUnit;

import org.opensearch.common.settings.Settings;
import org.opensearch.env.Environment;
import org.opensearch.node.InternalSettingsPreparer;
import org.opensearch.node.Node;

/**
 * Runs one real OpenSearch node inside this JVM, alone or as a member of a cluster, with the modules
 * squall needs loaded as classpath plugins: HTTP over Netty, Painless scripts, reindex, common
 * analysis, extra mappers and join ({@link Modules}: one for OpenSearch 2.x, one for 3.x, picked
 * by the build's profile).
 *
 * <p>Arguments: {@code --home DIR --host ADDRESS --http-port PORT [--cluster-name NAME]
 * [--node-name NAME] [--transport-port PORT] [--seed-hosts HOST:PORT,...]
 * [--cluster-managers NAME,...] [--replicas N]}. Without {@code --seed-hosts} the node forms a
 * cluster of its own ({@code discovery.type: single-node}). With them it finds the other nodes at
 * those transport addresses, and the first election is held among the cluster-manager-eligible nodes
 * named by {@code --cluster-managers}; every node holds data and may be elected. The node keeps its
 * data under {@code DIR/data} and its logs under {@code DIR/logs}. It prints {@code SQUALL_NODE_READY}
 * once HTTP is bound, and closes cleanly on SIGTERM.
 */
public final class OpenSearchNode {

    private OpenSearchNode() {}

    public static void main(String[] args) throws Exception {
        Path home = Path.of(argument(args, "--home", "target/opensearch")).toAbsolutePath();
        String host = argument(args, "--host", "127.0.0.1");
        String httpPort = argument(args, "--http-port", "9200");
        String clusterName = argument(args, "--cluster-name", "squall-test");
        String nodeName = argument(args, "--node-name", "squall-node");
        String transportPort = argument(args, "--transport-port", "9300-9400");
        String seedHosts = argument(args, "--seed-hosts", "");
        String managers = argument(args, "--cluster-managers", nodeName);
        String replicas = argument(args, "--replicas", "0");

        Path data = home.resolve("data");
        Path logs = home.resolve("logs");
        Files.createDirectories(home.resolve("config"));
        Files.createDirectories(data);
        Files.createDirectories(logs);

        Settings.Builder settings = Settings.builder()
                .put("cluster.name", clusterName)
                .put("node.name", nodeName)
                .put("path.home", home.toString())
                .put("path.data", data.toString())
                .put("path.logs", logs.toString())
                .put("network.host", host)
                .put("http.port", httpPort)
                .put("transport.port", transportPort)
                .put("node.portsfile", true)
                .put("cluster.routing.allocation.disk.threshold_enabled", false)
                .put("cluster.default_number_of_replicas", replicas)
                .put("script.max_compilations_rate", "10000/1m");
        if (seedHosts.isEmpty()) {
            settings.put("discovery.type", "single-node");
        } else {
            settings.putList("discovery.seed_hosts", split(seedHosts))
                    .putList("cluster.initial_cluster_manager_nodes", split(managers))
                    // A node cut off from the cluster manager refuses writes and keeps its shard
                    // copies. ("all" would also refuse reads, but it makes every node that loses the
                    // manager close all its copies and open them again from disk: each failover
                    // turned the whole cluster red, and a copy left "closing" held its shard lock
                    // for minutes, so the cluster never got back to green.)
                    .put("cluster.no_cluster_manager_block", "write");
        }

        Environment environment = InternalSettingsPreparer.prepareEnvironment(
                settings.build(), Collections.emptyMap(), null, () -> nodeName);
        Node node = Modules.node(environment);

        CountDownLatch closed = new CountDownLatch(1);
        Runtime.getRuntime().addShutdownHook(new Thread(() -> {
            try {
                node.close();
                node.awaitClose(30, TimeUnit.SECONDS);
            } catch (Exception e) {
                e.printStackTrace();
            } finally {
                closed.countDown();
            }
        }, "squall-node-shutdown"));

        try {
            node.start();
        } catch (Throwable failure) {
            failure.printStackTrace();
            System.out.println("SQUALL_NODE_FAILED " + failure);
            System.out.flush();
            System.exit(1);
        }
        System.out.println("SQUALL_NODE_READY " + nodeName + " http://" + host + ":" + httpPort
                + " pid=" + ProcessHandle.current().pid());
        System.out.flush();
        // OpenSearch's own threads are daemons: keep the JVM alive until the shutdown hook has run.
        closed.await();
    }

    private static List<String> split(String list) {
        return Arrays.stream(list.split(",")).map(String::trim).filter(s -> !s.isEmpty()).toList();
    }

    private static String argument(String[] args, String name, String fallback) {
        for (int i = 0; i + 1 < args.length; i++) {
            if (args[i].equals(name)) {
                return args[i + 1];
            }
        }
        return fallback;
    }
}
