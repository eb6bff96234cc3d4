package drconsole.testenv.mm2client;

import java.time.Duration;
import java.util.ArrayList;
import java.util.Arrays;
import java.util.HashMap;
import java.util.List;
import java.util.Map;
import java.util.TreeMap;

import org.apache.kafka.clients.consumer.OffsetAndMetadata;
import org.apache.kafka.common.TopicPartition;
import org.apache.kafka.connect.mirror.MirrorClient;
import org.apache.kafka.connect.mirror.RemoteClusterUtils;

/**
 * Calls MirrorMaker 2's client API for consumer offset translation, RemoteClusterUtils.translateOffsets,
 * N times against the target (DR) cluster and prints the result and the wall time per call.
 *
 * <pre>
 * TranslateOffsets &lt;bootstrap&gt; &lt;remote-alias&gt; &lt;group&gt; &lt;replication-policy-class&gt; &lt;N&gt; [key=value ...]
 * </pre>
 * Optional key=value arguments: {@code reused.calls=M} (default 0) runs a second series of M calls
 * through one MirrorClient; any other key is added to the client properties (e.g.
 * {@code consumer.fetch.max.wait.ms=10}; MirrorClientConfig takes {@code consumer.}/{@code admin.}
 * prefixed client settings).
 *
 *
 * Prints exactly one line on stdout, prefixed with "DRCONSOLE-MM2CLIENT ", holding JSON:
 * <pre>
 * {"group":"g","remote":"primary","calls":N,
 *  "offsets":{"events-0":123,...},            // DR topic names, from the first call
 *  "consistent":true,                          // every call returned the same map
 *  "translate_us":{"first":..,"min":..,"median":..,"max":..,"all":[..]},  // RemoteClusterUtils.translateOffsets
 *  "reused_client_us":{...}}                  // one MirrorClient, remoteConsumerOffsets; only with reused.calls
 * </pre>
 * RemoteClusterUtils.translateOffsets builds a MirrorClient (an Admin client) per call, and
 * MirrorClient.remoteConsumerOffsets a consumer per call that reads the whole
 * {@code <alias>.checkpoints.internal} partition; the second series reuses the MirrorClient, to show
 * how much of a call is client set-up. Logs go wherever log4j2 is configured (testenv: stderr).
 */
public final class TranslateOffsets {
    private TranslateOffsets() {}

    public static void main(String[] args) throws Exception {
        if (args.length < 5) {
            System.err.println("usage: TranslateOffsets <bootstrap> <remote-alias> <group> <replication-policy-class> <N> [key=value ...]");
            System.exit(2);
        }
        String bootstrap = args[0], remote = args[1], group = args[2], policy = args[3];
        int n = Integer.parseInt(args[4]);
        if (n < 1) {
            throw new IllegalArgumentException("N must be >= 1");
        }
        Map<String, Object> props = new HashMap<>();
        props.put("bootstrap.servers", bootstrap);
        props.put("replication.policy.class", policy);
        int reusedCalls = 0;
        for (int i = 5; i < args.length; i++) {
            int eq = args[i].indexOf('=');
            if (eq <= 0) {
                throw new IllegalArgumentException("expected key=value, got " + args[i]);
            }
            String k = args[i].substring(0, eq), v = args[i].substring(eq + 1);
            if (k.equals("reused.calls")) {
                reusedCalls = Integer.parseInt(v);
            } else {
                props.put(k, v);
            }
        }
        Duration timeout = Duration.ofSeconds(30);

        Map<String, Long> first = null;
        boolean consistent = true;
        long[] translate = new long[n];
        for (int i = 0; i < n; i++) {
            long start = System.nanoTime();
            Map<TopicPartition, OffsetAndMetadata> got = RemoteClusterUtils.translateOffsets(props, remote, group, timeout);
            translate[i] = (System.nanoTime() - start) / 1000;
            Map<String, Long> flat = flatten(got);
            if (first == null) {
                first = flat;
            } else if (!first.equals(flat)) {
                consistent = false;
            }
        }

        long[] reused = new long[reusedCalls];
        try (MirrorClient client = new MirrorClient(props)) {
            for (int i = 0; i < reusedCalls; i++) {
                long start = System.nanoTime();
                Map<TopicPartition, OffsetAndMetadata> got = client.remoteConsumerOffsets(group, remote, timeout);
                reused[i] = (System.nanoTime() - start) / 1000;
                if (!first.equals(flatten(got))) {
                    consistent = false;
                }
            }
        }

        StringBuilder b = new StringBuilder("DRCONSOLE-MM2CLIENT {");
        b.append("\"group\":").append(quote(group));
        b.append(",\"remote\":").append(quote(remote));
        b.append(",\"calls\":").append(n);
        b.append(",\"offsets\":{");
        String sep = "";
        for (Map.Entry<String, Long> e : first.entrySet()) {
            b.append(sep).append(quote(e.getKey())).append(':').append(e.getValue());
            sep = ",";
        }
        b.append('}');
        b.append(",\"consistent\":").append(consistent);
        b.append(",\"translate_us\":").append(stats(translate));
        if (reusedCalls > 0) {
            b.append(",\"reused_client_us\":").append(stats(reused));
        }
        b.append('}');
        System.out.println(b);
        System.out.flush();
    }

    /** "topic-partition" -> downstream offset, sorted by name. */
    private static Map<String, Long> flatten(Map<TopicPartition, OffsetAndMetadata> m) {
        Map<String, Long> out = new TreeMap<>();
        for (Map.Entry<TopicPartition, OffsetAndMetadata> e : m.entrySet()) {
            out.put(e.getKey().topic() + "-" + e.getKey().partition(), e.getValue().offset());
        }
        return out;
    }

    private static String stats(long[] micros) {
        long[] s = micros.clone();
        Arrays.sort(s);
        long median = s.length % 2 == 1 ? s[s.length / 2] : (s[s.length / 2 - 1] + s[s.length / 2]) / 2;
        List<String> all = new ArrayList<>();
        for (long v : micros) {
            all.add(Long.toString(v));
        }
        return "{\"first\":" + micros[0] + ",\"min\":" + s[0] + ",\"median\":" + median + ",\"max\":" + s[s.length - 1]
            + ",\"all\":[" + String.join(",", all) + "]}";
    }

    private static String quote(String s) {
        StringBuilder b = new StringBuilder("\"");
        for (char c : s.toCharArray()) {
            switch (c) {
                case '"' -> b.append("\\\"");
                case '\\' -> b.append("\\\\");
                default -> {
                    if (c < 0x20) {
                        b.append(String.format("\\u%04x", (int) c));
                    } else {
                        b.append(c);
                    }
                }
            }
        }
        return b.append('"').toString();
    }
}
