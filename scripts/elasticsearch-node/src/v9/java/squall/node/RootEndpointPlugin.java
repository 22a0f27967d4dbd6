package squall.node;

import java.util.Collection;
import java.util.List;
import java.util.function.Predicate;
import java.util.function.Supplier;

import org.elasticsearch.cluster.node.DiscoveryNodes;
import org.elasticsearch.cluster.service.ClusterService;
import org.elasticsearch.features.NodeFeature;
import org.elasticsearch.plugins.ActionPlugin;
import org.elasticsearch.plugins.Plugin;
import org.elasticsearch.rest.RestHandler;

/** Registers {@link RootEndpoint}, as Elasticsearch 9.x takes a plugin's REST handlers. */
public final class RootEndpointPlugin extends Plugin implements ActionPlugin {
    private volatile ClusterService clusterService;

    @Override
    public Collection<?> createComponents(PluginServices services) {
        clusterService = services.clusterService();
        return List.of();
    }

    @Override
    public Collection<RestHandler> getRestHandlers(RestHandlersServices services, Supplier<DiscoveryNodes> nodes,
            Predicate<NodeFeature> features) {
        return List.of(new RootEndpoint(() -> clusterService));
    }
}
