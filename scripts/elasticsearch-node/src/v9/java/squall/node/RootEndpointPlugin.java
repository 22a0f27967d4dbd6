package squall.node;

import java.util.Collection;
import java.util.List;
import java.util.function.Predicate;
import java.util.function.Supplier;

import org.elasticsearch.cluster.node.DiscoveryNodes;
import org.elasticsearch.features.NodeFeature;
import org.elasticsearch.rest.RestHandler;

/** Registers {@link RootEndpoint}, as Elasticsearch 9.x takes a plugin's REST handlers. */
public final class RootEndpointPlugin extends RootEndpointModule {

    @Override
    public Collection<RestHandler> getRestHandlers(RestHandlersServices services, Supplier<DiscoveryNodes> nodes,
            Predicate<NodeFeature> features) {
        return List.of(rootEndpoint());
    }
}
