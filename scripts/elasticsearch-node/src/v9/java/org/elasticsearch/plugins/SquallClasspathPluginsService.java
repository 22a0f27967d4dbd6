package org.elasticsearch.plugins;

import java.util.ArrayList;
import java.util.List;
import java.util.Map;

import org.elasticsearch.Build;
import org.elasticsearch.action.admin.cluster.node.info.PluginsAndModules;
import org.elasticsearch.env.Environment;

/**
 * A {@link PluginsService} whose plugins are classes already on the JVM's classpath, instead of
 * bundles unpacked under {@code modules/} and {@code plugins/} of an Elasticsearch distribution
 * (Elasticsearch 9.x).
 *
 * <p>It sits in {@code org.elasticsearch.plugins} because what it needs is package-private:
 * {@link PluginsService.LoadedPlugin}, and {@code loadPlugin} and {@code loadExtensions}, which create a
 * plugin the way Elasticsearch does and hand extensible plugins their extensions.
 *
 * <p>The base class is given a loader with no bundle, so it finds nothing; this class then answers
 * {@link #plugins()} and {@link #info()} with the classpath plugins, reported as modules (as the Netty
 * transport is in a real distribution): {@code GET _cat/plugins} stays empty.
 */
public final class SquallClasspathPluginsService extends PluginsService {

    private final List<LoadedPlugin> classpathPlugins;
    private final PluginsAndModules classpathInfo;

    /**
     * @param plugins the plugin classes to load, in order, by the name each reports in
     *        {@code GET _nodes/plugins}
     */
    public SquallClasspathPluginsService(Environment environment, PluginsLoader loader,
            Map<String, Class<? extends Plugin>> plugins) {
        super(environment.settings(), environment.configDir(), loader);
        List<LoadedPlugin> loaded = new ArrayList<>();
        List<PluginDescriptor> descriptors = new ArrayList<>();
        ClassLoader classLoader = SquallClasspathPluginsService.class.getClassLoader();
        plugins.forEach((name, pluginClass) -> {
            PluginDescriptor descriptor = describe(name, pluginClass);
            Plugin instance = loadPlugin(pluginClass, environment.settings(), environment.configDir());
            descriptors.add(descriptor);
            loaded.add(new LoadedPlugin(descriptor, instance, classLoader));
        });
        loadExtensions(loaded);
        this.classpathPlugins = List.copyOf(loaded);
        this.classpathInfo = new PluginsAndModules(List.of(), descriptors);
    }

    private static PluginDescriptor describe(String name, Class<? extends Plugin> pluginClass) {
        String version = Build.current().version();
        return new PluginDescriptor(
                name,
                "loaded from the classpath by squall's Elasticsearch test node",
                version,
                version,
                Integer.toString(Runtime.version().feature()),
                pluginClass.getName(),
                null, // no module name: the classpath is flat
                List.of(), // extends no other plugin
                false, // no native controller
                false, // not licensed
                false, // not modular
                false, // not a stable-API plugin
                PluginDescriptor.DeploymentTarget.ALL);
    }

    @Override
    protected List<LoadedPlugin> plugins() {
        return classpathPlugins;
    }

    @Override
    public PluginsAndModules info() {
        return classpathInfo;
    }
}
