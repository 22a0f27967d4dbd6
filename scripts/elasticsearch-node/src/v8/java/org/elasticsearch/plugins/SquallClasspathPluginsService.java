package org.elasticsearch.plugins;

import java.util.ArrayList;
import java.util.List;
import java.util.Map;

import org.elasticsearch.Build;
import org.elasticsearch.action.admin.cluster.node.info.PluginsAndModules;
import org.elasticsearch.common.settings.Settings;
import org.elasticsearch.env.Environment;
import org.elasticsearch.jdk.ModuleQualifiedExportsService;

/**
 * A {@link PluginsService} whose plugins are classes already on the JVM's classpath, instead of
 * bundles unpacked under {@code modules/} and {@code plugins/} of an Elasticsearch distribution.
 *
 * <p>It sits in {@code org.elasticsearch.plugins} (a split package, fine on a flat classpath) because
 * what it needs is package-private in 8.x: {@link PluginsService.LoadedPlugin}, and
 * {@code loadPlugin} and {@code loadExtensions}, which create a plugin the way Elasticsearch does
 * (its constructor taking settings and the config path, or settings, or nothing) and hand
 * extensible plugins their extensions.
 *
 * <p>The base class is given no modules or plugins directory, so it finds nothing on disk; this class
 * then answers {@link #plugins()} and {@link #info()} with the classpath plugins. They are reported as
 * modules, as the Netty transport is in a real distribution: {@code GET _cat/plugins} stays empty.
 */
public final class SquallClasspathPluginsService extends PluginsService {

    private final List<LoadedPlugin> classpathPlugins;
    private final PluginsAndModules classpathInfo;

    /**
     * @param plugins the plugin classes to load, in order, by the name each reports in
     *        {@code GET _nodes/plugins}
     */
    public SquallClasspathPluginsService(Settings settings, Environment environment,
            Map<String, Class<? extends Plugin>> plugins) {
        super(settings, null, null, environment.configFile());
        List<LoadedPlugin> loaded = new ArrayList<>();
        List<PluginDescriptor> descriptors = new ArrayList<>();
        plugins.forEach((name, pluginClass) -> {
            PluginDescriptor descriptor = describe(name, pluginClass);
            Plugin instance = loadPlugin(pluginClass, settings, environment.configFile());
            descriptors.add(descriptor);
            loaded.add(new LoadedPlugin(descriptor, instance));
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
                "17",
                pluginClass.getName(),
                null, // no module name: the classpath is flat
                List.of(), // extends no other plugin
                false, // no native controller
                false, // not licensed
                false, // not modular
                false); // not a stable-API plugin
    }

    /**
     * The base class would register the server module's qualified exports, for plugins loaded as
     * modules of their own layers. On a flat classpath the server is no named module (its descriptor
     * is null, which fails there) and no plugin is loaded into a layer: nothing to register.
     */
    @Override
    protected void addServerExportsService(Map<String, List<ModuleQualifiedExportsService>> exports) {}

    @Override
    protected List<LoadedPlugin> plugins() {
        return classpathPlugins;
    }

    @Override
    public PluginsAndModules info() {
        return classpathInfo;
    }
}
