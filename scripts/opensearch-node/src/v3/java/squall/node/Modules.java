package squall.node;

import java.util.Collections;
import java.util.List;

import org.opensearch.Version;
import org.opensearch.analysis.common.CommonAnalysisModulePlugin;
import org.opensearch.env.Environment;
import org.opensearch.index.mapper.MapperExtrasModulePlugin;
import org.opensearch.index.reindex.ReindexModulePlugin;
import org.opensearch.join.ParentJoinModulePlugin;
import org.opensearch.node.Node;
import org.opensearch.painless.PainlessModulePlugin;
import org.opensearch.plugins.Plugin;
import org.opensearch.plugins.PluginInfo;
import org.opensearch.transport.Netty4ModulePlugin;

/**
 * The node with the modules squall needs, as OpenSearch 3.x names them ({@code *ModulePlugin}) and
 * takes them: classpath plugins described by a {@link PluginInfo} each.
 */
final class Modules {

    private static final List<Class<? extends Plugin>> MODULES = List.of(
            Netty4ModulePlugin.class,
            PainlessModulePlugin.class,
            ReindexModulePlugin.class,
            CommonAnalysisModulePlugin.class,
            MapperExtrasModulePlugin.class,
            ParentJoinModulePlugin.class);

    /** {@link Node}'s constructor that takes classpath plugins is protected; this opens it. */
    private static final class EmbeddedNode extends Node {
        EmbeddedNode(Environment environment) {
            super(environment, MODULES.stream().map(Modules::describe).toList(), true);
        }
    }

    private Modules() {}

    private static PluginInfo describe(Class<? extends Plugin> module) {
        return new PluginInfo(module.getName(), "classpath module", "NA", Version.CURRENT,
                Runtime.version().feature() + "", module.getName(), Collections.emptyList(), false);
    }

    /** A node of {@code environment} with the modules loaded (not started). */
    static Node node(Environment environment) {
        return new EmbeddedNode(environment);
    }
}
