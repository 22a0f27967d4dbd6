package squall.node;

import java.util.List;

import org.opensearch.analysis.common.CommonAnalysisPlugin;
import org.opensearch.env.Environment;
import org.opensearch.index.mapper.MapperExtrasPlugin;
import org.opensearch.index.reindex.ReindexPlugin;
import org.opensearch.join.ParentJoinPlugin;
import org.opensearch.node.Node;
import org.opensearch.painless.PainlessPlugin;
import org.opensearch.plugins.Plugin;
import org.opensearch.transport.Netty4Plugin;

/**
 * The node with the modules squall needs, as OpenSearch 2.x names them and takes them: classpath
 * plugins given to the node by class.
 */
final class Modules {

    private static final List<Class<? extends Plugin>> MODULES = List.of(
            Netty4Plugin.class,
            PainlessPlugin.class,
            ReindexPlugin.class,
            CommonAnalysisPlugin.class,
            MapperExtrasPlugin.class,
            ParentJoinPlugin.class);

    /** {@link Node}'s constructor that takes classpath plugins is protected; this opens it. */
    private static final class EmbeddedNode extends Node {
        EmbeddedNode(Environment environment) {
            super(environment, MODULES, true);
        }
    }

    private Modules() {}

    /** A node of {@code environment} with the modules loaded (not started). */
    static Node node(Environment environment) {
        return new EmbeddedNode(environment);
    }
}
