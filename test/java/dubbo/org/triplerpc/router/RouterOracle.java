package org.triplerpc.router;

import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Paths;
import java.util.ArrayList;
import java.util.Collections;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;
import java.util.TreeMap;

import com.alibaba.fastjson2.JSON;
import com.alibaba.fastjson2.JSONArray;
import com.alibaba.fastjson2.JSONObject;
import com.alibaba.fastjson2.JSONWriter;
import org.apache.dubbo.common.URL;
import org.apache.dubbo.common.config.configcenter.ConfigChangeType;
import org.apache.dubbo.common.config.configcenter.ConfigChangedEvent;
import org.apache.dubbo.common.config.configcenter.ConfigurationListener;
import org.apache.dubbo.common.utils.Holder;
import org.apache.dubbo.rpc.Invocation;
import org.apache.dubbo.rpc.Invoker;
import org.apache.dubbo.rpc.Result;
import org.apache.dubbo.rpc.RpcException;
import org.apache.dubbo.rpc.RpcInvocation;
import org.apache.dubbo.rpc.cluster.router.RouterSnapshotNode;
import org.apache.dubbo.rpc.cluster.router.condition.config.AppStateRouter;
import org.apache.dubbo.rpc.cluster.router.condition.config.ProviderAppStateRouter;
import org.apache.dubbo.rpc.cluster.router.condition.config.ServiceStateRouter;
import org.apache.dubbo.rpc.cluster.router.state.AbstractStateRouter;
import org.apache.dubbo.rpc.cluster.router.state.BitList;
import org.apache.dubbo.rpc.cluster.router.state.TailStateRouter;
import org.apache.dubbo.rpc.cluster.router.tag.TagStateRouter;

/**
 * The router oracle of test/governance/oracle.test.ts: Dubbo 3.3.1's own state routers, chained
 * as a consumer chains them (TagStateRouter 100, ServiceStateRouter 140, ProviderAppStateRouter
 * 145, AppStateRouter 150, each continuing to the next, the chain stopping on an empty result as
 * with dubbo.router.should-fail-fast=true), run on a JSON file of cases.
 *
 * usage: java org.triplerpc.router.RouterOracle cases.json   (prints a JSON array, one object per case)
 *
 * A case: {"name", "consumer": "consumer://host/iface?application=...&...", "providers": ["tri://...", ...],
 *          "rules": [{"key": "<config-center key>", "rule": "<YAML>" | null}, ...], "method", "arguments": [...],
 *          "attachments": {...}, "repeat": N}
 * Rules go in order, through process(ConfigChangedEvent), to every router that listens on the key as in a
 * consumer: <interface>:<version>:<group>.condition-router → ServiceStateRouter; <consumer app>.condition-router →
 * AppStateRouter and ProviderAppStateRouter (which subscribes to the consumer's app when built); <provider
 * app>.condition-router → ProviderAppStateRouter (when the provider app differs from the consumer's);
 * <provider app>.tag-router → TagStateRouter. The providers are notified first, as RouterChain.setInvokers does.
 * Output: {"name", "kept": [indexes], "outcomes": {"0,2": n, ...} (repeat > 1), "trace": Dubbo's router
 * snapshot, "error": null or the exception}.
 */
public class RouterOracle {
    static final class FakeInvoker implements Invoker<Object> {
        final URL url;
        final int index;

        FakeInvoker(URL url, int index) {
            this.url = url;
            this.index = index;
        }

        public Class<Object> getInterface() { return Object.class; }
        public Result invoke(Invocation invocation) throws RpcException { throw new RpcException("not callable"); }
        public URL getUrl() { return url; }
        public boolean isAvailable() { return true; }
        public void destroy() {}
        public String toString() { return url.getAddress(); }
    }

    static Map<String, Object> runCase(JSONObject c, int ci) {
        Map<String, Object> res = new LinkedHashMap<>();
        res.put("name", c.getString("name") != null ? c.getString("name") : "case-" + ci);
        URL consumer = URL.valueOf(c.getString("consumer"));
        List<Invoker<Object>> list = new ArrayList<>();
        JSONArray ps = c.getJSONArray("providers");
        for (int i = 0; i < ps.size(); i++) list.add(new FakeInvoker(URL.valueOf(ps.getString(i)), i));
        BitList<Invoker<Object>> all = new BitList<>(list);

        TagStateRouter<Object> tag = new TagStateRouter<>(consumer);
        ServiceStateRouter<Object> service = new ServiceStateRouter<>(consumer);
        ProviderAppStateRouter<Object> providerApp = new ProviderAppStateRouter<>(consumer);
        AppStateRouter<Object> app = new AppStateRouter<>(consumer);
        List<AbstractStateRouter<Object>> chain = List.of(tag, service, providerApp, app);
        for (int i = 0; i < chain.size(); i++) {
            chain.get(i).setNextRouter(i + 1 < chain.size() ? chain.get(i + 1) : TailStateRouter.getInstance());
        }
        for (AbstractStateRouter<Object> r : chain) r.notify(all);

        String serviceKey = consumer.getColonSeparatedKey() + ".condition-router";
        String appKey = consumer.getApplication() + ".condition-router";
        String remoteApp = list.isEmpty() ? null : list.get(0).getUrl().getRemoteApplication();
        JSONArray rules = c.getJSONArray("rules");
        for (int i = 0; rules != null && i < rules.size(); i++) {
            String key = rules.getJSONObject(i).getString("key");
            String rule = rules.getJSONObject(i).getString("rule");
            ConfigChangedEvent ev = rule == null
                    ? new ConfigChangedEvent(key, "dubbo", null, ConfigChangeType.DELETED)
                    : new ConfigChangedEvent(key, "dubbo", rule, ConfigChangeType.MODIFIED);
            List<ConfigurationListener> listeners = new ArrayList<>();
            if (key.equals(serviceKey)) listeners.add(service);
            if (key.equals(appKey)) { listeners.add(app); listeners.add(providerApp); }
            if (remoteApp != null && !remoteApp.equals(consumer.getApplication()) && key.equals(remoteApp + ".condition-router")) listeners.add(providerApp);
            if (remoteApp != null && key.equals(remoteApp + ".tag-router")) listeners.add(tag);
            for (ConfigurationListener l : listeners) l.process(ev);
        }

        RpcInvocation inv = new RpcInvocation();
        inv.setMethodName(c.getString("method") != null ? c.getString("method") : "sayHello");
        JSONArray args = c.getJSONArray("arguments");
        Object[] argv = args == null ? new Object[0] : args.toArray();
        Class<?>[] types = new Class<?>[argv.length];
        for (int i = 0; i < argv.length; i++) types[i] = argv[i] == null ? Object.class : argv[i].getClass();
        inv.setArguments(argv);
        inv.setParameterTypes(types);
        JSONObject att = c.getJSONObject("attachments");
        if (att != null) for (String k : att.keySet()) inv.setAttachment(k, att.getString(k));

        int repeat = c.getIntValue("repeat", 1);
        Map<String, Integer> outcomes = new TreeMap<>();
        List<Integer> kept = null;
        String trace = "";
        for (int n = 0; n < repeat; n++) {
            Holder<RouterSnapshotNode<Object>> holder = new Holder<>();
            holder.set(new RouterSnapshotNode<>("oracle", all.clone()));
            BitList<Invoker<Object>> out = tag.route(all.clone(), consumer, inv, n == 0, holder);
            if (n == 0) trace = holder.get().toString().trim();
            List<Integer> k = new ArrayList<>();
            for (Invoker<Object> i : out) k.add(((FakeInvoker) i).index);
            Collections.sort(k);
            StringBuilder key = new StringBuilder();
            for (int x : k) key.append(key.length() == 0 ? "" : ",").append(x);
            outcomes.merge(key.toString(), 1, Integer::sum);
            if (n == 0) kept = k;
        }
        res.put("kept", kept);
        if (repeat > 1) res.put("outcomes", outcomes);
        res.put("trace", trace);
        res.put("error", null);
        return res;
    }

    public static void main(String[] a) throws Exception {
        String text = new String(Files.readAllBytes(Paths.get(a[0])), StandardCharsets.UTF_8);
        JSONArray cases = JSON.parseArray(text);
        List<Map<String, Object>> out = new ArrayList<>();
        for (int ci = 0; ci < cases.size(); ci++) {
            try {
                out.add(runCase(cases.getJSONObject(ci), ci));
            } catch (Throwable t) {
                Map<String, Object> res = new LinkedHashMap<>();
                res.put("name", cases.getJSONObject(ci).getString("name"));
                res.put("error", t.toString());
                out.add(res);
            }
        }
        System.out.println(JSON.toJSONString(out, JSONWriter.Feature.WriteNulls));
        System.exit(0);
    }
}
