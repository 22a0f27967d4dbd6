package squall.node;

import java.util.Collection;
import java.util.List;
import java.util.function.Predicate;
import java.util.function.Supplier;

import org.elasticsearch.Build;
import org.elasticsearch.client.internal.node.NodeClient;
import org.elasticsearch.cluster.metadata.IndexNameExpressionResolver;
import org.elasticsearch.cluster.node.DiscoveryNodes;
import org.elasticsearch.cluster.service.ClusterService;
import org.elasticsearch.common.io.stream.NamedWriteableRegistry;
import org.elasticsearch.common.settings.ClusterSettings;
import org.elasticsearch.common.settings.IndexScopedSettings;
import org.elasticsearch.common.settings.Settings;
import org.elasticsearch.common.settings.SettingsFilter;
import org.elasticsearch.features.NodeFeature;
import org.elasticsearch.index.IndexVersion;
import org.elasticsearch.plugins.ActionPlugin;
import org.elasticsearch.plugins.Plugin;
import org.elasticsearch.rest.BaseRestHandler;
import org.elasticsearch.rest.RestController;
import org.elasticsearch.rest.RestHandler;
import org.elasticsearch.rest.RestRequest;
import org.elasticsearch.rest.RestResponse;
import org.elasticsearch.rest.RestStatus;
import org.elasticsearch.xcontent.XContentBuilder;

/**
 * Answers {@code GET /} (and {@code HEAD /}) as Elasticsearch 8 does: node and cluster names, cluster
 * UUID, version details and tagline, taken from the running node ({@link Build#current()}, the cluster
 * state). In a distribution that endpoint belongs to the rest-root module, which is not published to
 * Maven Central; without this plugin {@code GET /} answers 405. squall's client tells Elasticsearch
 * from OpenSearch by this answer ({@code version.number}, {@code version.distribution}).
 */
public final class RootEndpointPlugin extends Plugin implements ActionPlugin {
    private volatile ClusterService clusterService;

    @Override
    public Collection<?> createComponents(PluginServices services) {
        clusterService = services.clusterService();
        return List.of();
    }

    @Override
    public Collection<RestHandler> getRestHandlers(Settings settings, NamedWriteableRegistry registry, RestController controller,
            ClusterSettings clusterSettings, IndexScopedSettings indexScopedSettings, SettingsFilter settingsFilter,
            IndexNameExpressionResolver resolver, Supplier<DiscoveryNodes> nodes, Predicate<NodeFeature> features) {
        return List.of(new BaseRestHandler() {
            @Override
            public String getName() {
                return "squall_main_action";
            }

            @Override
            public List<Route> routes() {
                return List.of(new Route(RestRequest.Method.GET, "/"), new Route(RestRequest.Method.HEAD, "/"));
            }

            @Override
            protected RestChannelConsumer prepareRequest(RestRequest request, NodeClient client) {
                return channel -> {
                    Build build = Build.current();
                    XContentBuilder b = channel.newBuilder();
                    b.startObject();
                    b.field("name", clusterService.localNode().getName());
                    b.field("cluster_name", clusterService.getClusterName().value());
                    b.field("cluster_uuid", clusterService.state().metadata().clusterUUID());
                    b.startObject("version")
                        .field("number", build.qualifiedVersion())
                        .field("build_flavor", build.flavor())
                        .field("build_type", build.type().displayName())
                        .field("build_hash", build.hash())
                        .field("build_date", build.date())
                        .field("build_snapshot", build.isSnapshot())
                        .field("lucene_version", IndexVersion.current().luceneVersion().toString())
                        .field("minimum_wire_compatibility_version", build.minWireCompatVersion())
                        .field("minimum_index_compatibility_version", build.minIndexCompatVersion())
                        .endObject();
                    b.field("tagline", "You Know, for Search");
                    b.endObject();
                    channel.sendResponse(new RestResponse(RestStatus.OK, b));
                };
            }
        });
    }
}
