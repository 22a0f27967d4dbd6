package squall.node;

import java.util.List;
import java.util.function.Supplier;

import org.elasticsearch.Build;
import org.elasticsearch.client.internal.node.NodeClient;
import org.elasticsearch.cluster.service.ClusterService;
import org.elasticsearch.index.IndexVersion;
import org.elasticsearch.rest.BaseRestHandler;
import org.elasticsearch.rest.RestRequest;
import org.elasticsearch.rest.RestResponse;
import org.elasticsearch.rest.RestStatus;
import org.elasticsearch.xcontent.XContentBuilder;

/**
 * Answers {@code GET /} (and {@code HEAD /}) as Elasticsearch does: node and cluster names, cluster
 * UUID, version details and tagline, taken from the running node ({@link Build#current()}, the cluster
 * state). In a distribution that endpoint belongs to the rest-root module, which is not published to
 * Maven Central; without it {@code GET /} answers 405. squall's client tells Elasticsearch from
 * OpenSearch by this answer ({@code version.number}, {@code version.distribution}).
 * {@link RootEndpointPlugin} (one per major version) registers it.
 */
final class RootEndpoint extends BaseRestHandler {
    private final Supplier<ClusterService> clusterServices;

    /** @param clusterServices the node's cluster service, once the node has made it */
    RootEndpoint(Supplier<ClusterService> clusterServices) {
        this.clusterServices = clusterServices;
    }

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
            ClusterService cluster = clusterServices.get();
            XContentBuilder b = channel.newBuilder();
            b.startObject();
            b.field("name", cluster.localNode().getName());
            b.field("cluster_name", cluster.getClusterName().value());
            b.field("cluster_uuid", cluster.state().metadata().clusterUUID());
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
}
