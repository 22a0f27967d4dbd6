package squall.node;

import java.nio.file.Files;
import java.nio.file.Path;
import java.util.Collections;
import java.util.LinkedHashMap;
import java.util.Map;
import java.util.concurrent.CountDownLatch;
import java.util.concurrent.TimeUnit;

import org.elasticsearch.common.logging.LogConfigurator;
import org.elasticsearch.common.settings.Settings;
import org.elasticsearch.env.Environment;
import org.elasticsearch.node.InternalSettingsPreparer;
import org.elasticsearch.node.Node;
import org.elasticsearch.node.SquallEmbeddedNode;
import org.elasticsearch.plugins.Plugin;
import org.elasticsearch.transport.netty4.Netty4Plugin;

/**
 * Runs one real Elasticsearch 8.17 node inside this JVM, a cluster of its own
 * ({@code discovery.type: single-node}), with HTTP and transport over Netty and a stand-in for the
 * root endpoint ({@link RootEndpointPlugin}) loaded as classpath plugins.
 *
 * <p>Only what Maven Central publishes is here: no Painless (scripts fail with
 * {@code script_lang not supported [painless]}), no {@code _reindex} or {@code _update_by_query}, no
 * analysis-common filters, and no x-pack (so no security: plain HTTP without authentication).
 *
 * <p>Arguments: {@code --home DIR --host ADDRESS --http-port PORT [--transport-port PORT]
 * [--cluster-name NAME] [--node-name NAME]}. The node keeps its data under {@code DIR/data} and its
 * logs (and the ports files, {@code node.portsfile}) under {@code DIR/logs}. It prints
 * {@code SQUALL_NODE_READY} once HTTP is bound, and closes cleanly on SIGTERM.
 *
 * <p>New indices get Elasticsearch's default of one replica, which a single node cannot place
 * (health yellow); Elasticsearch has no node setting for that default, so scripts/elasticsearch
 * installs a legacy index template giving them none once the node is up.
 */
public final class ElasticsearchNode {

    /** The classpath plugins, by the name each reports in {@code GET _nodes/plugins}. */
    private static Map<String, Class<? extends Plugin>> plugins() {
        Map<String, Class<? extends Plugin>> plugins = new LinkedHashMap<>();
        plugins.put("transport-netty4", Netty4Plugin.class);
        plugins.put("squall-rest-root", RootEndpointPlugin.class);
        return plugins;
    }

    private ElasticsearchNode() {}

    public static void main(String[] args) throws Exception {
        Path home = Path.of(argument(args, "--home", "target/elasticsearch")).toAbsolutePath();
        String host = argument(args, "--host", "127.0.0.1");
        String httpPort = argument(args, "--http-port", "9400");
        String transportPort = argument(args, "--transport-port", "9500");
        String clusterName = argument(args, "--cluster-name", "squall-test");
        String nodeName = argument(args, "--node-name", "squall-node");

        Path data = home.resolve("data");
        Path logs = home.resolve("logs");
        Files.createDirectories(home.resolve("config"));
        Files.createDirectories(data);
        Files.createDirectories(logs);

        // Elasticsearch 8 logs through its own org.elasticsearch.logging API, which reaches log4j (and
        // so log4j2.properties in this jar) only once this has run; the distribution's launcher does it.
        LogConfigurator.configureESLogging();
        LogConfigurator.setNodeName(nodeName);

        Settings settings = Settings.builder()
                .put("cluster.name", clusterName)
                .put("node.name", nodeName)
                .put("path.home", home.toString())
                .put("path.data", data.toString())
                .put("path.logs", logs.toString())
                .put("network.host", host)
                .put("http.port", httpPort)
                .put("transport.port", transportPort)
                .put("discovery.type", "single-node")
                .put("node.portsfile", true)
                .put("cluster.routing.allocation.disk.threshold_enabled", false)
                // No xpack.security.enabled: without x-pack the setting is unknown and refused;
                // security is simply absent.
                .build();

        Environment environment = InternalSettingsPreparer.prepareEnvironment(
                settings, Collections.emptyMap(), null, () -> nodeName);
        Node node = new SquallEmbeddedNode(environment, plugins());

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
        // Elasticsearch's own threads are daemons: keep the JVM alive until the shutdown hook has run.
        closed.await();
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
