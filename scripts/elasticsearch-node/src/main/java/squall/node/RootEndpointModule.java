package squall.node;

import java.util.Collection;
import java.util.List;

import org.elasticsearch.cluster.service.ClusterService;
import org.elasticsearch.plugins.ActionPlugin;
import org.elasticsearch.plugins.Plugin;

/**
 * What {@link RootEndpointPlugin} does on every major version: keep the node's cluster service and
 * make the {@link RootEndpoint} that reads it. The plugin of each major only hands the endpoint over
 * the way that version asks for REST handlers.
 */
abstract class RootEndpointModule extends Plugin implements ActionPlugin {
    private volatile ClusterService clusterService;

    @Override
    public Collection<?> createComponents(PluginServices services) {
        clusterService = services.clusterService();
        return List.of();
    }

    /** The handler of {@code GET /}. */
    protected final RootEndpoint rootEndpoint() {
        return new RootEndpoint(() -> clusterService);
    }
}
