//! StormCrawler's blocks where they differ from a plain doubling: the jitter past the cap, a
//! Retry-After of 0, and an escalation carried from another process.

use super::*;

/// Blocks `block` with `signal` once, `at` seconds in: how long the new block holds, if it does.
fn block_for(
    block: &mut Block,
    line: &Timeline,
    rules: &Rules<'_>,
    signal: Signal,
    at: f64,
) -> Option<f64> {
    let mut rng = fastrand::Rng::with_seed(at.to_bits());
    let end = block.observe(&line.event(signal, at, at), rules, &mut rng)?;
    Some((end - (line.start + secs(at))).as_secs_f64())
}

#[test]
fn the_jitter_lengthens_blocks_at_the_cap_so_capped_queues_come_back_apart() {
    let settings = FetcherSettings::default();
    let rules = Rules::new(&settings, secs(1.0), false);
    let line = Timeline::new();
    let day = 86_400.0;
    let mut capped = Vec::new();
    for host in 0..8 {
        let mut block = Block::default();
        let mut at = f64::from(host);
        let mut last = 0.0;
        for _ in 0..14 {
            last = block_for(&mut block, &line, &rules, TOO_MANY, at).expect("a block");
            at += last + 1.0;
        }
        capped.push(last);
    }
    assert!(
        capped.iter().all(|b| (day..day * 1.1).contains(b)),
        "{capped:?}"
    );
    capped.dedup();
    assert!(capped.len() > 1, "not all alike: {capped:?}");
}

#[test]
fn a_retry_after_of_zero_is_a_push_back_and_others_are_held_with_jitter() {
    let settings = FetcherSettings::default();
    let rules = Rules::new(&settings, secs(1.0), false);
    let (line, mut block) = (Timeline::new(), Block::default());
    let now = Signal::RetryAfter { hold: secs(0.0) };
    let held = block_for(&mut block, &line, &rules, now, 0.0).expect("a block");
    assert!((60.0..66.0).contains(&held), "the first block: {held}");
    assert_eq!(block.level(), 1);
    let asked = Signal::RetryAfter { hold: secs(600.0) };
    let held = block_for(&mut block, &line, &rules, asked, 10.0).expect("longer");
    assert!((600.0..660.0).contains(&held), "{held}");
    assert_eq!(block.level(), 1, "a hold asked for is no escalation");
}

#[test]
fn a_learned_escalation_is_kept_by_the_next_holder_until_the_decay() {
    let settings = exact();
    let rules = Rules::new(&settings, secs(1.0), false);
    let line = Timeline::new();
    let learned = LearnedPace {
        delay: secs(1.0),
        cause: PaceCause::Http(429),
        strikes: 3,
        limit: None,
        at: line.wall_at(0.0),
    };
    let mut block = Block::default();
    let ended = line.start + secs(500.0);
    assert!(block.adopt(
        learned,
        Some(ended),
        &rules,
        line.start + secs(10.0),
        line.wall_at(10.0)
    ));
    assert_eq!((block.level(), block.until()), (3, Some(ended)));
    assert_eq!(
        block.report(&rules),
        None,
        "what was adopted is not reported back"
    );
    let next = block_for(&mut block, &line, &rules, TOO_MANY, 600.0);
    assert_eq!(
        next,
        Some(480.0),
        "the fourth block: 60 s doubled three times"
    );

    let decay = settings.pace.backoff_decay.as_secs_f64();
    let mut late = Block::default();
    let wall = line.wall_at(decay + 1.0);
    assert!(late.adopt(learned, None, &rules, line.start + secs(decay + 1.0), wall));
    assert_eq!(late.level(), 0, "forgiven: quiet for the decay");
}
