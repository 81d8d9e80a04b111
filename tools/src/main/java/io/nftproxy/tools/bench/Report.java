package io.nftproxy.tools.bench;

import java.io.IOException;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.ArrayList;
import java.util.LinkedHashSet;
import java.util.List;
import java.util.Locale;
import java.util.Set;
import java.util.TreeSet;

import org.knowm.xchart.BitmapEncoder;
import org.knowm.xchart.XYChart;
import org.knowm.xchart.XYChartBuilder;
import org.knowm.xchart.style.markers.SeriesMarkers;

/**
 * The comparison's results as a CSV (one row per series with its percentiles), a Markdown report
 * (tables by case, ratios to nftproxy side by side) and PNG plots (sync time and connection
 * latency against the number of services, log scales).
 */
public final class Report {
    private Report() {
    }

    /** A CSV field: quoted when it holds a comma or a quote (RFC 4180). */
    static String csvField(String v) {
        return v.contains(",") || v.contains("\"") ? "\"" + v.replace("\"", "\"\"") + "\"" : v;
    }

    public static void write(Path dir, List<CompareBench.Row> rows, String command) throws IOException {
        Files.createDirectories(dir);
        StringBuilder csv = new StringBuilder("kind,backend,services,case,samples,p50_ms,p90_ms,p99_ms,max_ms,note\n");
        for (CompareBench.Row r : rows) {
            csv.append(String.join(",", r.kind(), r.backend(), Integer.toString(r.services()), r.sample(),
                    Integer.toString(r.nanos().length), CompareBench.ms(r.p(0.5)), CompareBench.ms(r.p(0.9)),
                    CompareBench.ms(r.p(0.99)), CompareBench.ms(r.p(1.0)), csvField(r.note()))).append('\n');
        }
        Files.writeString(dir.resolve("results.csv"), csv);
        Files.writeString(dir.resolve("report.md"), markdown(rows, command));
        plot(dir.resolve("sync.png"), rows, "sync", "full", "Full sync", "time (ms)");
        plot(dir.resolve("connect.png"), rows, "connect", "connect", "New-connection latency, p50", "connect to accept (ms)");
    }

    public static String markdown(List<CompareBench.Row> rows, String command) {
        StringBuilder md = new StringBuilder("# nftproxy bench\n\n```\n" + command + "\n```\n\n");
        Set<String> cases = new LinkedHashSet<>();
        rows.forEach(r -> cases.add(r.kind() + ": " + r.sample()));
        for (String c : cases) {
            md.append("## ").append(c).append("\n\n| services | backend | p50 ms | p90 ms | p99 ms | samples | vs nftproxy (p50) |\n")
                    .append("|---|---|---|---|---|---|---|\n");
            for (CompareBench.Row r : rows) {
                if (!(r.kind() + ": " + r.sample()).equals(c)) {
                    continue;
                }
                double ours = rows.stream().filter(o -> o.kind().equals(r.kind()) && o.sample().equals(r.sample())
                        && o.services() == r.services() && o.backend().equals("nftproxy")).mapToDouble(o -> o.p(0.5))
                        .findFirst().orElse(Double.NaN);
                String ratio = r.backend().equals("nftproxy") || Double.isNaN(ours) || Double.isNaN(r.p(0.5)) ? ""
                        : String.format(Locale.ROOT, "%.1f×", r.p(0.5) / ours);
                md.append("| ").append(r.services()).append(" | ").append(r.backend()).append(" | ")
                        .append(r.nanos().length > 0 ? CompareBench.ms(r.p(0.5)) + (r.note().isEmpty() ? ""
                                : r.note().startsWith(">") ? "; then " + r.note() : " (" + r.note() + ")")
                                : r.note()).append(" | ")
                        .append(CompareBench.ms(r.p(0.9))).append(" | ").append(CompareBench.ms(r.p(0.99))).append(" | ")
                        .append(r.nanos().length).append(" | ").append(ratio).append(" |\n");
            }
            md.append('\n');
        }
        return md.toString();
    }

    static void plot(Path file, List<CompareBench.Row> rows, String kind, String sample, String title, String yTitle)
            throws IOException {
        TreeSet<String> backends = new TreeSet<>();
        rows.stream().filter(r -> r.kind().equals(kind) && r.sample().equals(sample)).forEach(r -> backends.add(r.backend()));
        if (backends.isEmpty()) {
            return;
        }
        System.setProperty("java.awt.headless", "true");
        XYChart chart = new XYChartBuilder().width(800).height(500).title(title).xAxisTitle("services").yAxisTitle(yTitle).build();
        chart.getStyler().setXAxisLogarithmic(true);
        chart.getStyler().setYAxisLogarithmic(true);
        for (String b : backends) {
            List<Double> x = new ArrayList<>();
            List<Double> y = new ArrayList<>();
            for (CompareBench.Row r : rows) {
                if (r.kind().equals(kind) && r.sample().equals(sample) && r.backend().equals(b) && r.nanos().length > 0) {
                    x.add((double) r.services());
                    y.add(Math.max(r.p(0.5), 0.001));
                }
            }
            if (!x.isEmpty()) {
                chart.addSeries(b, x, y).setMarker(SeriesMarkers.CIRCLE);
            }
        }
        if (!chart.getSeriesMap().isEmpty()) {
            BitmapEncoder.saveBitmap(chart, file.toString(), BitmapEncoder.BitmapFormat.PNG);
        }
    }
}
