package drconsole.testenv.flink;

import java.io.IOException;
import java.util.ArrayList;
import java.util.Arrays;
import java.util.HashMap;
import java.util.List;
import java.util.Map;
import java.util.Properties;

import org.apache.flink.api.common.eventtime.WatermarkStrategy;
import org.apache.flink.api.common.functions.OpenContext;
import org.apache.flink.api.common.functions.RichMapFunction;
import org.apache.flink.api.common.serialization.SimpleStringSchema;
import org.apache.flink.api.common.state.ValueState;
import org.apache.flink.api.common.state.ValueStateDescriptor;
import org.apache.flink.api.common.typeinfo.Types;
import org.apache.flink.api.java.functions.KeySelector;
import org.apache.flink.connector.kafka.source.KafkaSource;
import org.apache.flink.connector.kafka.source.KafkaSourceBuilder;
import org.apache.flink.connector.kafka.source.enumerator.initializer.OffsetsInitializer;
import org.apache.flink.streaming.api.environment.StreamExecutionEnvironment;
import org.apache.flink.streaming.api.functions.sink.v2.DiscardingSink;
import org.apache.kafka.clients.consumer.OffsetResetStrategy;
import org.apache.kafka.clients.producer.KafkaProducer;
import org.apache.kafka.clients.producer.ProducerConfig;
import org.apache.kafka.clients.producer.ProducerRecord;
import org.apache.kafka.common.serialization.StringSerializer;

/**
 * drconsole testenv job: KafkaSource (uid configurable, offsets committed on checkpoint) ->
 * keyBy(value hash mod N) -> per-key count in ValueState -> discard.
 *
 * <p>Program arguments ({@code --name value}):
 *
 * <ul>
 *   <li>{@code --bootstrap} Kafka bootstrap servers (default 127.0.0.1:9092)
 *   <li>{@code --topics} comma separated topics (default events)
 *   <li>{@code --group} consumer group id; offsets are committed on checkpoint (default
 *       flink-events)
 *   <li>{@code --source-uid} uid of the source operator (default kafka-source)
 *   <li>{@code --parallelism} job parallelism, 0 = cluster/REST default (default 0)
 *   <li>{@code --checkpoint-interval-ms} (default 1000)
 *   <li>{@code --keys} number of distinct keys of the count state (default 8; keeps state tiny)
 *   <li>{@code --name} job name (default drconsole-events)
 *   <li>{@code --probe-topic} if set, the first record each reader subtask deserializes per
 *       partition is reported to this topic on the same Kafka (key = probe tag, value
 *       {@code topic,partition,offset,value}; see ProbingDeserializer). The job graph is the same
 *       with or without it.
 *   <li>{@code --probe-tag} key of the probe records (default: the job name)
 *   <li>{@code --count-topic} if set, every update of the per-key count is also written to this
 *       topic on the same Kafka (key = probe tag, value {@code key,count}; see CountPerKey), so a
 *       test can see the keyed state continue after a restore. Only the map function's fields
 *       change: the job graph and operator ids are the same with or without it.
 * </ul>
 *
 * <p>Starting offsets: committed offsets of the group, else earliest. They only apply to
 * partitions without restored state (a savepoint wins).
 */
public final class EventsJob {

    private EventsJob() {}

    public static void main(String[] args) throws Exception {
        Map<String, String> a = parseArgs(args);
        String bootstrap = a.getOrDefault("bootstrap", "127.0.0.1:9092");
        List<String> topics = new ArrayList<>();
        for (String s : a.getOrDefault("topics", "events").split(",")) {
            if (!s.isBlank()) {
                topics.add(s.trim());
            }
        }
        String group = a.getOrDefault("group", "flink-events");
        String uid = a.getOrDefault("source-uid", "kafka-source");
        int parallelism = Integer.parseInt(a.getOrDefault("parallelism", "0"));
        long interval = Long.parseLong(a.getOrDefault("checkpoint-interval-ms", "1000"));
        final int keys = Integer.parseInt(a.getOrDefault("keys", "8"));
        String name = a.getOrDefault("name", "drconsole-events");
        String probeTopic = a.getOrDefault("probe-topic", "");
        String probeTag = a.getOrDefault("probe-tag", name);
        String countTopic = a.getOrDefault("count-topic", "");

        StreamExecutionEnvironment env = StreamExecutionEnvironment.getExecutionEnvironment();
        if (parallelism > 0) {
            env.setParallelism(parallelism);
        }
        env.enableCheckpointing(interval);

        KafkaSourceBuilder<String> builder =
                KafkaSource.<String>builder()
                        .setBootstrapServers(bootstrap)
                        .setTopics(topics)
                        .setGroupId(group)
                        .setStartingOffsets(
                                OffsetsInitializer.committedOffsets(OffsetResetStrategy.EARLIEST))
                        .setProperty("commit.offsets.on.checkpoint", "true")
                        .setProperty("client.id.prefix", group);
        if (probeTopic.isBlank()) {
            builder.setValueOnlyDeserializer(new SimpleStringSchema());
        } else {
            builder.setDeserializer(new ProbingDeserializer(bootstrap, probeTopic, probeTag));
        }
        KafkaSource<String> source = builder.build();

        env.fromSource(source, WatermarkStrategy.noWatermarks(), "kafka-source")
                .uid(uid)
                .name("kafka-source")
                .keyBy(new ModKey(keys))
                .map(new CountPerKey(new ModKey(keys), bootstrap, countTopic, probeTag))
                .uid("count-per-key")
                .name("count-per-key")
                .sinkTo(new DiscardingSink<>())
                .uid("discard")
                .name("discard");

        System.out.println("drconsole EventsJob: bootstrap=" + bootstrap + " topics=" + topics
                + " group=" + group + " source-uid=" + uid + " parallelism=" + parallelism
                + (probeTopic.isBlank() ? "" : " probe-topic=" + probeTopic + " probe-tag=" + probeTag)
                + (countTopic.isBlank() ? "" : " count-topic=" + countTopic));
        env.execute(name);
    }

    static Map<String, String> parseArgs(String[] args) {
        Map<String, String> m = new HashMap<>();
        for (int i = 0; i < args.length; i++) {
            String k = args[i];
            if (!k.startsWith("--")) {
                throw new IllegalArgumentException("unexpected argument " + k + " in " + Arrays.toString(args));
            }
            if (i + 1 >= args.length) {
                throw new IllegalArgumentException("missing value for " + k);
            }
            m.put(k.substring(2), args[++i]);
        }
        return m;
    }

    /** Key = hash of the value mod n (a handful of keys: tiny keyed state). */
    static final class ModKey implements KeySelector<String, Integer> {
        private static final long serialVersionUID = 1L;

        private final int n;

        ModKey(int n) {
            this.n = n;
        }

        @Override
        public Integer getKey(String value) {
            return Math.floorMod(value.hashCode(), n);
        }
    }

    /**
     * Counts records per key in keyed ValueState. With a count topic, each new count is also
     * sent (asynchronously, in order: one producer per subtask, one partition) as
     * {@code key=tag, value="key,count"}; a failed send fails the job, close() flushes.
     */
    static final class CountPerKey extends RichMapFunction<String, Long> {
        private static final long serialVersionUID = 1L;

        private final ModKey key;
        private final String bootstrap;
        private final String countTopic;
        private final String tag;
        private transient ValueState<Long> count;
        private transient KafkaProducer<String, String> producer;
        private transient volatile Exception sendError;

        CountPerKey(ModKey key, String bootstrap, String countTopic, String tag) {
            this.key = key;
            this.bootstrap = bootstrap;
            this.countTopic = countTopic;
            this.tag = tag;
        }

        @Override
        public void open(OpenContext ctx) {
            count = getRuntimeContext().getState(new ValueStateDescriptor<>("count", Types.LONG));
            if (countTopic.isBlank()) {
                return;
            }
            Properties p = new Properties();
            p.put(ProducerConfig.BOOTSTRAP_SERVERS_CONFIG, bootstrap);
            p.put(ProducerConfig.ACKS_CONFIG, "all");
            p.put(ProducerConfig.LINGER_MS_CONFIG, "5");
            p.put(ProducerConfig.ENABLE_IDEMPOTENCE_CONFIG, "true"); // keeps send order on retries
            p.put(ProducerConfig.CLIENT_ID_CONFIG, "drconsole-count-" + tag);
            // As in ProbingDeserializer: the serializers are found through the job's class loader.
            ClassLoader prev = Thread.currentThread().getContextClassLoader();
            Thread.currentThread().setContextClassLoader(KafkaProducer.class.getClassLoader());
            try {
                producer = new KafkaProducer<>(p, new StringSerializer(), new StringSerializer());
            } finally {
                Thread.currentThread().setContextClassLoader(prev);
            }
        }

        @Override
        public Long map(String value) throws Exception {
            Long c = count.value();
            long n = (c == null ? 0 : c) + 1;
            count.update(n);
            if (producer != null) {
                if (sendError != null) {
                    throw new IOException("count to " + countTopic + " failed: " + sendError, sendError);
                }
                producer.send(
                        new ProducerRecord<>(countTopic, tag, key.getKey(value) + "," + n),
                        (md, e) -> {
                            if (e != null) {
                                sendError = e;
                            }
                        });
            }
            return n;
        }

        @Override
        public void close() throws Exception {
            if (producer != null) {
                producer.flush();
                producer.close();
                producer = null;
            }
            if (sendError != null) {
                throw new IOException("count to " + countTopic + " failed: " + sendError, sendError);
            }
        }
    }
}
