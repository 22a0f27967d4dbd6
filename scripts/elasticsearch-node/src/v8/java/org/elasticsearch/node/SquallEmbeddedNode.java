package org.elasticsearch.node;

import java.util.Map;

import org.elasticsearch.common.settings.Settings;
import org.elasticsearch.env.Environment;
import org.elasticsearch.plugins.Plugin;
import org.elasticsearch.plugins.PluginsService;
import org.elasticsearch.plugins.SquallClasspathPluginsService;

/**
 * An Elasticsearch 8.x {@link Node} whose plugins are classes on the classpath.
 *
 * <p>In 8.x the public {@code Node(Environment)} constructor only loads plugins from an installed
 * distribution's directories, and what lets a caller choose otherwise is package-private:
 * {@code Node(NodeConstruction)}, {@code NodeConstruction.prepareConstruction} and
 * {@code NodeServiceProvider}. Hence this class sits in {@code org.elasticsearch.node} (a split
 * package, fine on a flat classpath) and only swaps the provider's plugins service.
 */
public final class SquallEmbeddedNode extends Node {

    /**
     * @param plugins the plugin classes to load, by the name each reports in {@code GET _nodes/plugins}
     */
    public SquallEmbeddedNode(Environment environment, Map<String, Class<? extends Plugin>> plugins) {
        super(NodeConstruction.prepareConstruction(environment, new ClasspathServiceProvider(plugins), true));
    }

    private static final class ClasspathServiceProvider extends NodeServiceProvider {
        private final Map<String, Class<? extends Plugin>> plugins;

        ClasspathServiceProvider(Map<String, Class<? extends Plugin>> plugins) {
            this.plugins = plugins;
        }

        @Override
        PluginsService newPluginService(Environment environment, Settings settings) {
            return new SquallClasspathPluginsService(settings, environment, plugins);
        }
    }
}
