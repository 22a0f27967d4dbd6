// InteropCheck: drives a URLFrontier v2 server through the official urlfrontier-API 2.5 stubs (the
// async stub for the PutURLs stream, the blocking stub for everything else) and checks, in one
// fresh crawl:
//   a. PutURLs: 6 discovered URLs in queues a.test and b.test are each acknowledged OK, while the
//      stream is still open (long-lived streams are how crawlers use it)
//   b. GetURLs (2 queues, 2 URLs a queue, delay_requestable 3 s) hands out 4 URLs, 2 a queue, with
//      key, url and the depth metadata (asked until they came: a server may show URLs a moment
//      after acking them)
//   c. asked again at once, it hands out none of those 4 while their delay runs
//   d. 2 of the 4 (one a queue) put back as known, refetchable in an hour: acknowledged OK
//   e. once the delay has lapsed, the other 2 are handed out again, the 2 put back are not
//   f. GetURLStatus of a URL put back: known, with the refetch date that was sent
//   g. ListQueues, GetStats, CountURLs and ListURLs agree with what was put
//   h. everything put as known never to be refetched: GetURLs hands out nothing any more
// Prints one line a check, "ok NAME" or "FAIL NAME: DETAIL", and exits 0 only when every check held
// (1 otherwise, 2 for bad arguments). Every call has a deadline: an absent server fails, never hangs.
package squall.interop;

import crawlercommons.urlfrontier.URLFrontierGrpc;
import crawlercommons.urlfrontier.URLFrontierGrpc.URLFrontierBlockingStub;
import crawlercommons.urlfrontier.URLFrontierGrpc.URLFrontierStub;
import crawlercommons.urlfrontier.Urlfrontier.AckMessage;
import crawlercommons.urlfrontier.Urlfrontier.CountUrlParams;
import crawlercommons.urlfrontier.Urlfrontier.DiscoveredURLItem;
import crawlercommons.urlfrontier.Urlfrontier.GetParams;
import crawlercommons.urlfrontier.Urlfrontier.KnownURLItem;
import crawlercommons.urlfrontier.Urlfrontier.ListUrlParams;
import crawlercommons.urlfrontier.Urlfrontier.Pagination;
import crawlercommons.urlfrontier.Urlfrontier.QueueList;
import crawlercommons.urlfrontier.Urlfrontier.QueueWithinCrawlParams;
import crawlercommons.urlfrontier.Urlfrontier.Stats;
import crawlercommons.urlfrontier.Urlfrontier.StringList;
import crawlercommons.urlfrontier.Urlfrontier.URLInfo;
import crawlercommons.urlfrontier.Urlfrontier.URLItem;
import crawlercommons.urlfrontier.Urlfrontier.URLStatusRequest;
import io.grpc.ChannelCredentials;
import io.grpc.Grpc;
import io.grpc.ManagedChannel;
import io.grpc.ManagedChannelBuilder;
import io.grpc.Metadata;
import io.grpc.Status;
import io.grpc.StatusRuntimeException;
import io.grpc.TlsChannelCredentials;
import io.grpc.stub.MetadataUtils;
import io.grpc.stub.StreamObserver;
import java.io.File;
import java.io.IOException;
import java.nio.file.Files;
import java.nio.file.Path;
import java.time.Duration;
import java.time.Instant;
import java.util.ArrayList;
import java.util.HashMap;
import java.util.LinkedHashMap;
import java.util.LinkedHashSet;
import java.util.List;
import java.util.Map;
import java.util.Set;
import java.util.TreeSet;
import java.util.concurrent.ConcurrentHashMap;
import java.util.concurrent.CopyOnWriteArrayList;
import java.util.concurrent.CountDownLatch;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.atomic.AtomicReference;

public final class InteropCheck {
  static final List<String> KEYS = List.of("a.test", "b.test");
  static final int URLS_PER_KEY = 3;
  static final int DELAY_REQUESTABLE_S = 3;
  /** Deadline of every unary or server-streaming call. */
  static final long CALL_DEADLINE_S = 20;
  /** How long to wait for every ack of a PutURLs stream. */
  static final long ACK_TIMEOUT_S = 20;
  static final String STATUS_FIELD = "squall.status";

  /** A check that did not hold; its message says what was expected and what came. */
  static final class CheckFailed extends Exception {
    CheckFailed(String message) {
      super(message);
    }
  }

  /** One check: throws when it does not hold; may return a note to print after "ok NAME: ". */
  interface Step {
    String run() throws Exception;
  }

  /** A named check; when one that later checks need fails, the rest are reported as not run. */
  record Check(String name, Step step, boolean laterChecksNeedIt) {}

  private final String crawl;
  private final URLFrontierBlockingStub blocking;
  private final URLFrontierStub async;

  /** url -> key of the 6 URLs put in (a.test first, in order). */
  private final Map<String, String> allUrls = new LinkedHashMap<>();
  /** The 4 URLs handed out by b, url -> key, and when that answer had come. */
  private final Map<String, String> handedOut = new LinkedHashMap<>();
  private Instant handedOutAt;
  /** The 2 URLs of b put back as known in d, and the refetch date sent for them. */
  private final Set<String> putBack = new LinkedHashSet<>();
  private long putBackRefetch;

  InteropCheck(ManagedChannel channel, String crawl) {
    this.crawl = crawl;
    this.blocking = URLFrontierGrpc.newBlockingStub(channel);
    this.async = URLFrontierGrpc.newStub(channel);
    for (String key : KEYS) {
      for (int i = 1; i <= URLS_PER_KEY; i++) {
        allUrls.put("http://" + key + "/" + i, key);
      }
    }
  }

  public static void main(String[] args) throws InterruptedException, IOException {
    Map<String, String> options = new HashMap<>();
    options.put("--crawl", "interop-" + System.currentTimeMillis());
    for (int i = 0; i < args.length; i++) {
      String arg = args[i];
      boolean known = arg.equals("--address") || arg.equals("--crawl")
          || arg.equals("--ca-file") || arg.equals("--token-file");
      if (known && i + 1 < args.length) {
        options.put(arg, args[++i]);
      } else {
        usage("unexpected argument '" + arg + "'");
      }
    }
    String address = options.get("--address");
    String crawl = options.get("--crawl");
    if (address == null) {
      usage("--address is required");
    }
    System.out.println("InteropCheck: server " + address + ", crawl " + crawl);
    ManagedChannel channel =
        channel(address, options.get("--ca-file"), options.get("--token-file"));
    boolean allHeld;
    try {
      allHeld = new InteropCheck(channel, crawl).runAll();
    } finally {
      channel.shutdownNow();
      channel.awaitTermination(5, TimeUnit.SECONDS);
    }
    System.exit(allHeld ? 0 : 1);
  }

  /**
   * A channel to the server: plaintext, or TLS trusting the CA in caFile; with a tokenFile, every
   * call carries its first line as a bearer token (metadata "authorization: Bearer TOKEN").
   */
  static ManagedChannel channel(String address, String caFile, String tokenFile)
      throws IOException {
    ManagedChannelBuilder<?> builder;
    if (caFile != null) {
      ChannelCredentials tls =
          TlsChannelCredentials.newBuilder().trustManager(new File(caFile)).build();
      builder = Grpc.newChannelBuilder(address, tls);
    } else {
      builder = ManagedChannelBuilder.forTarget(address).usePlaintext();
    }
    if (tokenFile != null) {
      String token = Files.readAllLines(Path.of(tokenFile)).get(0).trim();
      Metadata headers = new Metadata();
      headers.put(
          Metadata.Key.of("authorization", Metadata.ASCII_STRING_MARSHALLER), "Bearer " + token);
      builder.intercept(MetadataUtils.newAttachHeadersInterceptor(headers));
    }
    return builder.build();
  }

  static void usage(String problem) {
    System.err.println("InteropCheck: " + problem);
    System.err.println(
        "usage: InteropCheck --address HOST:PORT [--crawl CRAWL_ID] [--ca-file PEM]"
            + " [--token-file FILE]");
    System.exit(2);
  }

  boolean runAll() throws InterruptedException {
    List<Check> checks =
        List.of(
            new Check("a-put-discovered", this::putDiscovered, true),
            new Check("b-get-urls", this::getUrls, true),
            new Check("c-no-second-hand-out", this::noSecondHandOut, false),
            new Check("d-put-known", this::putKnown, false),
            new Check("e-hand-out-after-delay", this::handOutAfterDelay, false),
            new Check("f-url-status", this::urlStatus, false),
            new Check("g-list-queues", this::listQueues, false),
            new Check("g-stats", this::stats, false),
            new Check("g-count-urls", this::countUrls, false),
            new Check("g-list-urls", this::listUrls, false),
            new Check("h-put-known-never", this::putKnownNever, false),
            new Check("h-nothing-left", this::nothingLeft, false));
    int ok = 0;
    int failed = 0;
    String stopReason = null;
    for (Check check : checks) {
      if (stopReason != null) {
        System.out.println("FAIL " + check.name() + ": not run, " + stopReason);
        failed++;
        continue;
      }
      try {
        String note = check.step().run();
        System.out.println("ok " + check.name() + (note == null ? "" : ": " + note));
        ok++;
        continue;
      } catch (CheckFailed e) {
        System.out.println("FAIL " + check.name() + ": " + e.getMessage());
      } catch (StatusRuntimeException e) {
        System.out.println("FAIL " + check.name() + ": " + describe(e.getStatus()));
        Status.Code code = e.getStatus().getCode();
        if (code == Status.Code.UNAVAILABLE) {
          stopReason = "the server could not be reached in " + check.name();
        } else if (code == Status.Code.DEADLINE_EXCEEDED) {
          stopReason = "the server did not answer " + check.name() + " in time";
        }
      } catch (InterruptedException e) {
        throw e;
      } catch (Exception e) {
        System.out.println("FAIL " + check.name() + ": " + e);
      }
      failed++;
      if (stopReason == null && check.laterChecksNeedIt()) {
        stopReason = "every later check needs " + check.name();
      }
    }
    System.out.println("InteropCheck: " + ok + " ok, " + failed + " failed");
    return failed == 0;
  }

  // ---- the checks -------------------------------------------------------------------------

  String putDiscovered() throws Exception {
    List<URLItem> items = new ArrayList<>();
    for (Map.Entry<String, String> url : allUrls.entrySet()) {
      URLInfo info = info(url.getKey(), url.getValue(), Map.of());
      items.add(
          URLItem.newBuilder()
              .setDiscovered(DiscoveredURLItem.newBuilder().setInfo(info))
              .setID(url.getKey())
              .build());
    }
    putAll(items);
    return null;
  }

  String getUrls() throws Exception {
    // A server may show URLs a moment after it acked them (squall's reads its frontier in the
    // background): ask until 4 came or 15 s passed, every answer within the limits asked for.
    List<URLInfo> got = new ArrayList<>();
    long giveUp = System.nanoTime() + TimeUnit.SECONDS.toNanos(15);
    int calls = 0;
    while (got.size() < 4 && System.nanoTime() < giveUp) {
      List<URLInfo> answer = getUrlsOnce();
      calls++;
      Map<String, Integer> inAnswer = new LinkedHashMap<>();
      for (URLInfo info : answer) {
        if (inAnswer.merge(info.getKey(), 1, Integer::sum) > 2) {
          throw new CheckFailed("more than 2 URLs of " + info.getKey() + " in one answer: " + urls(answer));
        }
      }
      if (!answer.isEmpty()) {
        handedOutAt = Instant.now();
        got.addAll(answer);
      } else {
        Thread.sleep(200);
      }
    }
    Map<String, Integer> perKey = new LinkedHashMap<>();
    for (URLInfo info : got) {
      if (info.getUrl().isEmpty() || info.getKey().isEmpty()) {
        throw new CheckFailed("a URLInfo without url or key: " + brief(info));
      }
      if (!info.getKey().equals(allUrls.get(info.getUrl()))) {
        throw new CheckFailed(
            "handed out " + brief(info) + ", not one of the URLs put with its key");
      }
      StringList depth = info.getMetadataMap().get("depth");
      if (depth == null || !depth.getValuesList().equals(List.of("0"))) {
        throw new CheckFailed(
            "metadata depth should be [0], got " + info.getMetadataMap() + " for " + info.getUrl());
      }
      if (handedOut.put(info.getUrl(), info.getKey()) != null) {
        throw new CheckFailed(info.getUrl() + " came twice in one answer");
      }
      perKey.merge(info.getKey(), 1, Integer::sum);
    }
    if (got.size() != 4 || !perKey.equals(Map.of("a.test", 2, "b.test", 2))) {
      throw new CheckFailed(
          "expected 4 URLs, 2 from each of a.test and b.test; got " + urls(got) + " " + perKey
              + " in " + calls + " GetURLs");
    }
    return "4 URLs in " + calls + " GetURLs";
  }

  String noSecondHandOut() throws Exception {
    List<URLInfo> got = getUrlsOnce();
    List<String> again = new ArrayList<>();
    for (URLInfo info : got) {
      if (handedOut.containsKey(info.getUrl())) {
        again.add(info.getUrl());
      }
    }
    if (!again.isEmpty()) {
      throw new CheckFailed(
          "handed out again while their delay_requestable runs: " + again + " (answer " + urls(got)
              + ")");
    }
    return "second answer " + urls(got);
  }

  String putKnown() throws Exception {
    // the first URL handed out from each queue
    for (String key : KEYS) {
      handedOut.entrySet().stream()
          .filter(e -> e.getValue().equals(key))
          .findFirst()
          .ifPresent(e -> putBack.add(e.getKey()));
    }
    putBackRefetch = Instant.now().getEpochSecond() + 3600;
    List<URLItem> items = new ArrayList<>();
    for (String url : putBack) {
      items.add(known(url, putBackRefetch));
    }
    putAll(items);
    return "put back " + putBack + " refetchable from " + putBackRefetch;
  }

  String handOutAfterDelay() throws Exception {
    Set<String> expected = new TreeSet<>(handedOut.keySet());
    expected.removeAll(putBack);
    long waitMs =
        Duration.between(Instant.now(), handedOutAt.plusSeconds(DELAY_REQUESTABLE_S + 1)).toMillis();
    if (waitMs > 0) {
      Thread.sleep(waitMs);
    }
    Set<String> seen = new TreeSet<>();
    long giveUp = System.nanoTime() + TimeUnit.SECONDS.toNanos(15);
    int calls = 0;
    while (true) {
      List<URLInfo> got = getUrlsOnce();
      calls++;
      for (URLInfo info : got) {
        if (putBack.contains(info.getUrl())) {
          throw new CheckFailed(
              info.getUrl() + " was handed out although it was put back as known, refetchable "
                  + "only in an hour (answer " + urls(got) + ")");
        }
        seen.add(info.getUrl());
      }
      if (seen.containsAll(expected)) {
        return "handed out again " + expected + " (" + calls + " GetURLs)";
      }
      if (System.nanoTime() > giveUp) {
        Set<String> missing = new TreeSet<>(expected);
        missing.removeAll(seen);
        throw new CheckFailed(
            "15 s after the delay lapsed, " + missing + " had not been handed out again; "
                + calls + " GetURLs handed out " + seen);
      }
      Thread.sleep(500);
    }
  }

  String urlStatus() throws Exception {
    String url = first(putBack);
    URLItem item =
        blocking()
            .getURLStatus(
                URLStatusRequest.newBuilder()
                    .setUrl(url)
                    .setKey(allUrls.get(url))
                    .setCrawlID(crawl)
                    .build());
    if (!item.hasKnown()) {
      throw new CheckFailed("expected a known URLItem for " + url + ", got " + item.getItemCase());
    }
    KnownURLItem known = item.getKnown();
    if (!known.getInfo().getUrl().equals(url)) {
      throw new CheckFailed("asked for " + url + ", got " + known.getInfo().getUrl());
    }
    long date = known.getRefetchableFromDate();
    if (Math.abs(date - putBackRefetch) > 1) {
      throw new CheckFailed(
          url + " refetchable_from_date " + date + ", but " + putBackRefetch + " was sent");
    }
    return null;
  }

  String listQueues() throws Exception {
    // include_inactive: a queue whose URLs are all in process or not due yet is "inactive", and
    // which queues are active at this point depends on timing; the check is that both exist
    QueueList queues =
        blocking()
            .listQueues(
                Pagination.newBuilder()
                    .setSize(10)
                    .setIncludeInactive(true)
                    .setCrawlID(crawl)
                    .build());
    if (!queues.getValuesList().containsAll(KEYS)) {
      throw new CheckFailed("expected queues " + KEYS + ", got " + queues.getValuesList());
    }
    return "queues " + queues.getValuesList() + ", total " + queues.getTotal();
  }

  String stats() throws Exception {
    Stats stats = blocking().getStats(QueueWithinCrawlParams.newBuilder().setCrawlID(crawl).build());
    String shown =
        "size "
            + stats.getSize()
            + ", inProcess "
            + stats.getInProcess()
            + ", numberOfQueues "
            + stats.getNumberOfQueues()
            + ", counts "
            + stats.getCountsMap();
    // 6 URLs in all; 2 of them are known and not in process, so at most 4 can be in process
    if (stats.getNumberOfQueues() < 2
        || stats.getSize() > allUrls.size()
        || stats.getInProcess() > allUrls.size() - putBack.size()) {
      throw new CheckFailed(
          "expected numberOfQueues >= 2, size <= 6, inProcess <= 4; got " + shown);
    }
    return shown;
  }

  String countUrls() throws Exception {
    long count =
        blocking()
            .countURLs(CountUrlParams.newBuilder().setKey("a.test").setCrawlID(crawl).build())
            .getValue();
    if (count != URLS_PER_KEY) {
      throw new CheckFailed("CountURLs(a.test) = " + count + ", expected " + URLS_PER_KEY);
    }
    return null;
  }

  String listUrls() throws Exception {
    List<String> listed = new ArrayList<>();
    blocking()
        .listURLs(
            ListUrlParams.newBuilder().setKey("a.test").setCrawlID(crawl).setSize(100).build())
        .forEachRemaining(
            item ->
                listed.add(
                    item.hasKnown()
                        ? item.getKnown().getInfo().getUrl()
                        : item.getDiscovered().getInfo().getUrl()));
    Set<String> expected = new TreeSet<>();
    allUrls.forEach((url, key) -> {
      if (key.equals("a.test")) {
        expected.add(url);
      }
    });
    if (listed.size() != URLS_PER_KEY || !new TreeSet<>(listed).equals(expected)) {
      throw new CheckFailed("ListURLs(a.test) gave " + listed + ", expected " + expected);
    }
    return null;
  }

  String putKnownNever() throws Exception {
    List<URLItem> items = new ArrayList<>();
    for (String url : allUrls.keySet()) {
      if (!putBack.contains(url)) {
        items.add(known(url, 0));
      }
    }
    putAll(items);
    return null;
  }

  String nothingLeft() throws Exception {
    // Every answer over 5 s must be empty: by its end the delay of any earlier hand-out has lapsed
    // too, and the 2 URLs put back in d are not due for an hour.
    for (int call = 1; call <= 6; call++) {
      List<URLInfo> got = getUrlsOnce();
      if (!got.isEmpty()) {
        throw new CheckFailed(
            "GetURLs #" + call + " after every URL was put as known handed out " + urls(got));
      }
      if (call < 6) {
        Thread.sleep(1000);
      }
    }
    return null;
  }

  // ---- calls ------------------------------------------------------------------------------

  URLFrontierBlockingStub blocking() {
    return blocking.withDeadlineAfter(CALL_DEADLINE_S, TimeUnit.SECONDS);
  }

  List<URLInfo> getUrlsOnce() {
    GetParams params =
        GetParams.newBuilder()
            .setMaxQueues(2)
            .setMaxUrlsPerQueue(2)
            .setDelayRequestable(DELAY_REQUESTABLE_S)
            .setCrawlID(crawl)
            .build();
    List<URLInfo> got = new ArrayList<>();
    blocking().getURLs(params).forEachRemaining(got::add);
    return got;
  }

  /**
   * Sends the items on one PutURLs stream and requires one OK ack for each, by ID, within 20 s,
   * while the stream is still open; then half-closes and requires the server to end the stream.
   */
  void putAll(List<URLItem> items) throws Exception {
    Set<String> ids = new LinkedHashSet<>();
    for (URLItem item : items) {
      ids.add(item.getID());
    }
    Map<String, AckMessage.Status> acks = new ConcurrentHashMap<>();
    List<String> oddities = new CopyOnWriteArrayList<>();
    CountDownLatch allAcked = new CountDownLatch(1);
    CountDownLatch ended = new CountDownLatch(1);
    AtomicReference<Throwable> error = new AtomicReference<>();
    StreamObserver<AckMessage> responses =
        new StreamObserver<>() {
          @Override
          public void onNext(AckMessage ack) {
            if (!ids.contains(ack.getID())) {
              oddities.add("an ack for an ID never sent: '" + ack.getID() + "'");
            } else if (acks.put(ack.getID(), ack.getStatus()) != null) {
              oddities.add("a second ack for " + ack.getID());
            }
            if (acks.keySet().containsAll(ids)) {
              allAcked.countDown();
            }
          }

          @Override
          public void onError(Throwable t) {
            error.set(t);
            allAcked.countDown();
            ended.countDown();
          }

          @Override
          public void onCompleted() {
            allAcked.countDown();
            ended.countDown();
          }
        };
    StreamObserver<URLItem> requests =
        async.withDeadlineAfter(ACK_TIMEOUT_S + 10, TimeUnit.SECONDS).putURLs(responses);
    for (URLItem item : items) {
      requests.onNext(item);
    }
    boolean acked = allAcked.await(ACK_TIMEOUT_S, TimeUnit.SECONDS);
    if (error.get() != null) {
      throw asFailure(error.get(), "the PutURLs stream failed");
    }
    boolean endedEarly = ended.getCount() == 0;
    requests.onCompleted();
    boolean endedAfterHalfClose = ended.await(5, TimeUnit.SECONDS);
    if (error.get() != null) {
      throw asFailure(error.get(), "the PutURLs stream failed after the client's half-close");
    }
    Set<String> missing = new TreeSet<>(ids);
    missing.removeAll(acks.keySet());
    if (!acked || !missing.isEmpty()) {
      throw new CheckFailed(
          (endedEarly ? "the server ended the stream" : "after " + ACK_TIMEOUT_S + " s")
              + " with no ack for " + missing + " (stream still open, " + acks.size()
              + " of " + ids.size() + " acked)");
    }
    Map<String, AckMessage.Status> notOk = new LinkedHashMap<>();
    acks.forEach((id, status) -> {
      if (status != AckMessage.Status.OK) {
        notOk.put(id, status);
      }
    });
    if (!notOk.isEmpty()) {
      throw new CheckFailed("acks not OK: " + notOk);
    }
    if (!oddities.isEmpty()) {
      throw new CheckFailed(String.join("; ", oddities));
    }
    if (!endedAfterHalfClose) {
      throw new CheckFailed("every ack came, but the server did not end the stream within 5 s "
          + "of the client's half-close");
    }
  }

  static Exception asFailure(Throwable t, String context) {
    if (t instanceof StatusRuntimeException s) {
      return s;
    }
    return new CheckFailed(context + ": " + t);
  }

  // ---- messages ---------------------------------------------------------------------------

  URLInfo info(String url, String key, Map<String, String> extra) {
    URLInfo.Builder info =
        URLInfo.newBuilder()
            .setUrl(url)
            .setKey(key)
            .setCrawlID(crawl)
            .putMetadata("depth", StringList.newBuilder().addValues("0").build());
    extra.forEach((k, v) -> info.putMetadata(k, StringList.newBuilder().addValues(v).build()));
    return info.build();
  }

  URLItem known(String url, long refetchableFromDate) {
    URLInfo info = info(url, allUrls.get(url), Map.of(STATUS_FIELD, "FETCHED"));
    return URLItem.newBuilder()
        .setKnown(
            KnownURLItem.newBuilder().setInfo(info).setRefetchableFromDate(refetchableFromDate))
        .setID(url)
        .build();
  }

  static List<String> urls(List<URLInfo> infos) {
    List<String> urls = new ArrayList<>();
    for (URLInfo info : infos) {
      urls.add(info.getUrl());
    }
    return urls;
  }

  static String brief(URLInfo info) {
    return "{url '" + info.getUrl() + "', key '" + info.getKey() + "'}";
  }

  static String first(Set<String> set) throws CheckFailed {
    if (set.isEmpty()) {
      throw new CheckFailed("nothing was put back as known in d");
    }
    return set.iterator().next();
  }

  static String describe(Status status) {
    StringBuilder text = new StringBuilder("gRPC " + status.getCode());
    if (status.getDescription() != null) {
      text.append(": ").append(status.getDescription());
    }
    if (status.getCause() != null) {
      text.append(" (").append(status.getCause()).append(")");
    }
    return text.toString();
  }
}
