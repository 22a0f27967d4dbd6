package org.elasticsearch.node;

import java.util.Map;
import java.util.Set;

import org.elasticsearch.env.Environment;
import org.elasticsearch.plugins.Plugin;
import org.elasticsearch.plugins.PluginsLoader;
import org.elasticsearch.plugins.PluginsService;
import org.elasticsearch.plugins.SquallClasspathPluginsService;

/**
 * An Elasticsearch 9.x {@link Node} whose plugins are classes on the classpath.
 *
 * <p>As in 8.x, what lets a caller choose the plugins service is package-private
 * ({@code Node(NodeConstruction)}, {@code NodeConstruction.prepareConstruction},
 * {@code NodeServiceProvider}), so this class sits in {@code org.elasticsearch.node}. 9.x hands the
 * construction a {@link PluginsLoader} (the bundles found on disk, loaded into module layers); this
 * node gives it one with no bundle and swaps the provider's plugins service for the classpath's.
 */
public final class SquallEmbeddedNode extends Node {

    /**
     * @param plugins the plugin classes to load, by the name each reports in {@code GET _nodes/plugins}
     */
    public SquallEmbeddedNode(Environment environment, Map<String, Class<? extends Plugin>> plugins) {
        // No server exports: on a flat classpath the server is no named module (that step would
        // fail on its null descriptor), and no plugin is loaded into a layer that would need them.
        this(environment, PluginsLoader.createPluginsLoader(Set.of(), Set.of(), Map.of(), false), plugins);
    }

    private SquallEmbeddedNode(Environment environment, PluginsLoader loader,
            Map<String, Class<? extends Plugin>> plugins) {
        super(NodeConstruction.prepareConstruction(environment, loader, new ClasspathServiceProvider(plugins), true));
    }

    private static final class ClasspathServiceProvider extends NodeServiceProvider {
        private final Map<String, Class<? extends Plugin>> plugins;

        ClasspathServiceProvider(Map<String, Class<? extends Plugin>> plugins) {
            this.plugins = plugins;
        }

        @Override
        PluginsService newPluginService(Environment environment, PluginsLoader loader) {
            return new SquallClasspathPluginsService(environment, loader, plugins);
        }
    }
}
