package drconsole.testenv.flink;

import java.io.IOException;
import java.nio.charset.StandardCharsets;
import java.util.HashSet;
import java.util.Properties;
import java.util.Set;

import org.apache.flink.api.common.serialization.DeserializationSchema;
import org.apache.flink.api.common.typeinfo.TypeInformation;
import org.apache.flink.api.common.typeinfo.Types;
import org.apache.flink.connector.kafka.source.reader.deserializer.KafkaRecordDeserializationSchema;
import org.apache.flink.util.Collector;
import org.apache.kafka.clients.consumer.ConsumerRecord;
import org.apache.kafka.clients.producer.KafkaProducer;
import org.apache.kafka.clients.producer.ProducerConfig;
import org.apache.kafka.clients.producer.ProducerRecord;
import org.apache.kafka.common.serialization.StringSerializer;

/**
 * Value-only UTF-8 deserializer (like SimpleStringSchema) that also reports the FIRST record it
 * deserializes per topic-partition, i.e. where this source instance really started reading: it
 * writes {@code key=<tag>, value="<topic>,<partition>,<offset>,<value>"} to a probe topic
 * (synchronously, with a short-lived producer, once per partition) and prints the same line.
 *
 * <p>The probe does not change the job graph (operator ids and chaining stay the same): it only
 * replaces the source's deserializer. One instance per reader subtask; "first" is per subtask
 * lifetime, so a restart (failover) reports again.
 */
final class ProbingDeserializer implements KafkaRecordDeserializationSchema<String> {
    private static final long serialVersionUID = 1L;

    private final String bootstrap;
    private final String probeTopic;
    private final String tag;
    private transient Set<String> seen;

    ProbingDeserializer(String bootstrap, String probeTopic, String tag) {
        this.bootstrap = bootstrap;
        this.probeTopic = probeTopic;
        this.tag = tag;
    }

    @Override
    public void open(DeserializationSchema.InitializationContext context) {
        seen = new HashSet<>();
    }

    @Override
    public void deserialize(ConsumerRecord<byte[], byte[]> record, Collector<String> out)
            throws IOException {
        String value = record.value() == null ? null : new String(record.value(), StandardCharsets.UTF_8);
        if (seen == null) {
            seen = new HashSet<>();
        }
        if (seen.add(record.topic() + "-" + record.partition())) {
            probe(record.topic() + "," + record.partition() + "," + record.offset() + "," + value);
        }
        if (value != null) {
            out.collect(value);
        }
    }

    private void probe(String line) throws IOException {
        System.out.println("drconsole EventsJob probe " + tag + ": first record " + line);
        Properties p = new Properties();
        p.put(ProducerConfig.BOOTSTRAP_SERVERS_CONFIG, bootstrap);
        p.put(ProducerConfig.ACKS_CONFIG, "all");
        p.put(ProducerConfig.LINGER_MS_CONFIG, "0");
        p.put(ProducerConfig.CLIENT_ID_CONFIG, "drconsole-probe-" + tag);
        // The job's class loader, not the thread's context class loader, finds the serializers.
        ClassLoader prev = Thread.currentThread().getContextClassLoader();
        Thread.currentThread().setContextClassLoader(KafkaProducer.class.getClassLoader());
        try (KafkaProducer<String, String> producer =
                new KafkaProducer<>(p, new StringSerializer(), new StringSerializer())) {
            producer.send(new ProducerRecord<>(probeTopic, tag, line)).get();
        } catch (Exception e) {
            throw new IOException("probe to " + probeTopic + " failed: " + e, e);
        } finally {
            Thread.currentThread().setContextClassLoader(prev);
        }
    }

    @Override
    public TypeInformation<String> getProducedType() {
        return Types.STRING;
    }
}
