package drconsole.testenv.flink;

import java.net.URI;
import java.util.concurrent.CountDownLatch;
import java.util.concurrent.TimeUnit;

import org.apache.flink.configuration.Configuration;
import org.apache.flink.configuration.GlobalConfiguration;
import org.apache.flink.runtime.minicluster.MiniCluster;
import org.apache.flink.runtime.minicluster.MiniClusterConfiguration;

/**
 * Starts a Flink MiniCluster (JobManager + TaskManagers in this JVM) with the REST API, for
 * testenv. Usage: {@code MiniClusterMain <confDir>} where confDir holds Flink's config.yaml
 * (rest.port, rest.address, io.tmp.dirs, ...). Extra settings read here:
 * {@code drconsole.minicluster.taskmanagers} (default 1) and
 * {@code taskmanager.numberOfTaskSlots} (default 4).
 *
 * <p>Prints {@code drconsole MiniCluster REST ready at <url>} once the REST endpoint is up. Runs
 * until killed; SIGTERM closes the cluster.
 */
public final class MiniClusterMain {

    private MiniClusterMain() {}

    public static void main(String[] args) throws Exception {
        if (args.length != 1) {
            System.err.println("usage: MiniClusterMain <confDir with config.yaml>");
            System.exit(2);
        }
        long start = System.nanoTime();
        Configuration conf = GlobalConfiguration.loadConfiguration(args[0]);
        int tms = Integer.parseInt(conf.getString("drconsole.minicluster.taskmanagers", "1"));
        int slots = Integer.parseInt(conf.getString("taskmanager.numberOfTaskSlots", "4"));

        MiniClusterConfiguration cfg =
                new MiniClusterConfiguration.Builder()
                        .setConfiguration(conf)
                        .setNumTaskManagers(tms)
                        .setNumSlotsPerTaskManager(slots)
                        .build();
        MiniCluster mc = new MiniCluster(cfg);
        CountDownLatch closed = new CountDownLatch(1);
        Runtime.getRuntime()
                .addShutdownHook(
                        new Thread(
                                () -> {
                                    try {
                                        mc.closeAsync().get(20, TimeUnit.SECONDS);
                                    } catch (Exception e) {
                                        System.err.println("drconsole MiniCluster close: " + e);
                                    }
                                    closed.countDown();
                                },
                                "drconsole-minicluster-shutdown"));
        mc.start();
        URI rest = mc.getRestAddress().get(60, TimeUnit.SECONDS);
        System.out.printf(
                "drconsole MiniCluster REST ready at %s (%d taskmanager(s) x %d slots) in %d ms%n",
                rest, tms, slots, TimeUnit.NANOSECONDS.toMillis(System.nanoTime() - start));
        System.out.flush();
        closed.await();
    }
}
