//! The sharded half of the [`Runner`]: which stages accept `--shard`, running one shard of
//! a stage into its part directory, merging a complete set of parts into the stage's
//! ordinary output, and the parts' status. Ownership of items, part names and the checks of
//! a part set are [`super::shard`]'s.

use super::*;

impl Runner<'_> {
    /// The stages that accept `--shard`, for messages.
    pub(super) fn shardable_names(&self) -> String {
        self.dag
            .topo_order()
            .iter()
            .filter(|s| s.shardable())
            .map(|s| s.name())
            .collect::<Vec<_>>()
            .join(", ")
    }

    /// The shardable stage called `target`, or a one-line error.
    pub fn shardable_stage(
        &self,
        target: &str,
        what: &str,
    ) -> Result<&'static dyn Stage, PipelineError> {
        let stage = self.dag.find(target)?;
        if !stage.shardable() {
            return Err(PipelineError::Invalid(format!(
                "stage '{target}' is not item-parallel, so it has no {what}; shardable stages: {}",
                self.shardable_names()
            )));
        }
        Ok(stage)
    }

    /// Refuse unless every input of `stage` is fresh for every domain of this run: shards
    /// never run upstream stages themselves (N of them would race to write the same
    /// directories), so the error names the stage to run first.
    pub(super) fn require_fresh_inputs(
        &self,
        stage: &dyn Stage,
        what: &str,
    ) -> Result<(), PipelineError> {
        let mut upstream = self.dag.plan(stage.name())?;
        upstream.retain(|s| s.name() != stage.name());
        // The stale input furthest downstream: running it brings the others up to date.
        let stale = self
            .status(&upstream)?
            .into_iter()
            .filter(|(name, ..)| stage.inputs().contains(name))
            .filter_map(|(name, domain, state)| match state {
                Freshness::Stale(why) => Some((name, domain, why)),
                Freshness::Fresh => None,
            })
            .last();
        match stale {
            None => Ok(()),
            Some((name, domain, why)) => Err(PipelineError::stage(
                stage.name(),
                domain,
                ErrorKind::Input,
                format!(
                    "{what}: input '{name}' is not fresh ({why}); run `tracer run {name}` (or `tracer run {} --upstream`) first",
                    stage.name()
                ),
            )),
        }
    }

    /// Run shard `shard` of the item-parallel stage `target` for every domain of this run:
    /// each domain's part goes to `output/.shards/<target>/domain=<d>/part-<i>-of-<N>/`.
    /// The caller holds the output lock shared and the shard's lock exclusively.
    pub fn run_shard(
        &self,
        target: &str,
        shard: Shard,
        mut on_step: impl FnMut(&StepReport),
    ) -> Result<Vec<StepReport>, PipelineError> {
        let stage = self.shardable_stage(target, "shards")?;
        self.validate(target)?;
        self.require_fresh_inputs(stage, &format!("--shard {shard}"))?;
        let (path, table) = self.stage_config(stage)?;
        let scope = super::PreflightScope {
            paths: self.paths,
            domains: &self.domains,
        };
        stage.preflight(&path, &table, &scope).map_err(|message| {
            PipelineError::stage(stage.name(), "*", ErrorKind::Endpoint, message)
        })?;
        let mut reports = Vec::new();
        for &domain in &self.domains {
            let report = self.run_one_shard(stage, domain, shard)?;
            on_step(&report);
            reports.push(report);
        }
        Ok(reports)
    }

    pub(super) fn run_one_shard(
        &self,
        stage: &'static dyn Stage,
        domain: &'static dyn Domain,
        shard: Shard,
    ) -> Result<StepReport, PipelineError> {
        let report = |ran: bool, summary: String, notes: Vec<String>| StepReport {
            stage: stage.name(),
            domain: domain.name(),
            ran,
            summary,
            notes,
        };
        if !self.force && self.freshness(stage, domain)? == Freshness::Fresh {
            return Ok(report(
                false,
                "the merged output is fresh; nothing to do".into(),
                vec![],
            ));
        }
        let (config_path, table) = self.stage_config(stage)?;
        let inputs = self.inputs_of(stage, domain, &table)?;
        let config_hash = config::config_hash(&table);
        let fp = fingerprint(stage, domain.name(), &config_hash, self.seed, &inputs);
        let parts_dir = shard::parts_dir(&self.paths.output, stage.name(), domain.name());
        let part = parts_dir.join(shard.part_name());
        let mut notes = recover_slot(&part)?;
        if !self.force
            && let Some(m) = read_manifest(&part)
            && m.fingerprint == fp
            && m.shard == Some(shard)
            && is_complete(&part)
        {
            return Ok(report(false, m.summary, notes));
        }
        let tmp = parts_dir.join(format!(".tmp-{}-{}", shard.part_name(), std::process::id()));
        std::fs::create_dir_all(&tmp).map_err(|e| ArtifactError::io(&tmp, e))?;
        let ctx = StageContext {
            paths: self.paths,
            stage: stage.name(),
            code_root: stage.code_root(),
            domain,
            seed: self.seed,
            config: table,
            config_path,
            out_dir: tmp.clone(),
            inputs: inputs.clone(),
            shard: Some(shard),
            usage: Default::default(),
        };
        let journal = ctx.journal_path();
        for p in remove_journals(
            &self.paths.output,
            stage.name(),
            domain.name(),
            Some(&journal),
            JournalsOf::Shard(shard),
        ) {
            notes.push(format!(
                "removed the journal of a run with other inputs, config or code: {}",
                p.display()
            ));
        }
        failpoint::hit("stage-started", stage.name());
        let started = Instant::now();
        let summary = match stage.run(&ctx) {
            Ok(s) => s,
            Err(e) => {
                let _ = std::fs::remove_dir_all(&tmp);
                return Err(e);
            }
        };
        let manifest = Manifest {
            stage: stage.name().to_string(),
            domain: domain.name().to_string(),
            fingerprint: fp,
            seed: self.seed,
            config_hash,
            inputs,
            outputs: hash_outputs(&tmp)?,
            summary: summary.clone(),
            shard: Some(shard),
            usage: ctx.usage(),
        };
        let json = serde_json::to_vec_pretty(&manifest).unwrap_or_default();
        write_atomic(&tmp.join(MANIFEST), &json)?;
        swap_into_place(&tmp, &part, stage.name())?;
        if journal.exists() {
            std::fs::remove_file(&journal).map_err(|e| ArtifactError::io(&journal, e))?;
        }
        Ok(report(
            true,
            format!("{summary} ({:.2}s)", started.elapsed().as_secs_f64()),
            notes,
        ))
    }

    /// `tracer merge <target>`: for every domain, check that the shard parts form one
    /// complete set (every `i` of one `N` once, each made with the current fingerprint and
    /// unmodified) and write the stage's ordinary output from them. Every domain is checked
    /// before any is merged, so a bad part set merges nothing. A domain whose output is
    /// already fresh and has no parts is reported fresh. The caller holds the output lock.
    pub fn merge(
        &self,
        target: &str,
        mut on_step: impl FnMut(&StepReport),
    ) -> Result<Vec<StepReport>, PipelineError> {
        let stage = self.shardable_stage(target, "shard parts")?;
        self.validate(target)?;
        self.require_fresh_inputs(stage, "merge")?;
        let mut ready = Vec::new();
        for &domain in &self.domains {
            let parts_dir = shard::parts_dir(&self.paths.output, stage.name(), domain.name());
            let scan = shard::scan(&parts_dir);
            let fresh = self.freshness(stage, domain)? == Freshness::Fresh;
            if fresh {
                // The output already holds every item: parts beside it are stale leftovers
                // (a shard that ran before one process finished the stage) and would make
                // every later merge fail while the shards say "nothing to do".
                ready.push((domain, None));
                continue;
            }
            let (config_path, table) = self.stage_config(stage)?;
            let inputs = self.inputs_of(stage, domain, &table)?;
            let fp = fingerprint(
                stage,
                domain.name(),
                &config::config_hash(&table),
                self.seed,
                &inputs,
            );
            let parts =
                shard::check_complete(&scan, &parts_dir, stage.name(), domain.name(), &fp, |p| {
                    hash_outputs(p).ok()
                })
                .map_err(|message| {
                    PipelineError::stage(stage.name(), domain.name(), ErrorKind::Input, message)
                })?;
            ready.push((domain, Some(((config_path, table), inputs, parts))));
        }
        let mut reports = Vec::new();
        for (domain, work) in ready {
            let report = match work {
                None => StepReport {
                    stage: stage.name(),
                    domain: domain.name(),
                    ran: false,
                    summary: read_manifest(&stage_dir(
                        &self.paths.output,
                        stage.name(),
                        domain.name(),
                    ))
                    .map(|m| m.summary)
                    .unwrap_or_default(),
                    notes: self.clear_stale_parts(stage, domain)?,
                },
                Some((config, inputs, parts)) => {
                    self.produce(stage, domain, config, inputs, Some(parts), vec![])?
                }
            };
            on_step(&report);
            reports.push(report);
        }
        Ok(reports)
    }

    /// Remove the shard parts (and shard journals) of a (stage, domain) whose ordinary
    /// output is fresh: it holds every item, so they can only be stale. The caller holds the
    /// output lock exclusively (no shard runs). One note per removal, to log.
    pub(super) fn clear_stale_parts(
        &self,
        stage: &dyn Stage,
        domain: &dyn Domain,
    ) -> Result<Vec<String>, PipelineError> {
        let mut notes = Vec::new();
        let parts_dir = shard::parts_dir(&self.paths.output, stage.name(), domain.name());
        let scan = shard::scan(&parts_dir);
        if !scan.parts.is_empty() || !scan.foreign.is_empty() {
            std::fs::remove_dir_all(&parts_dir).map_err(|e| ArtifactError::io(&parts_dir, e))?;
            notes.push(format!(
                "removed {} stale shard part(s) in {}: the output is fresh and holds every item",
                scan.parts.len() + scan.foreign.len(),
                parts_dir.display()
            ));
        }
        for p in remove_journals(
            &self.paths.output,
            stage.name(),
            domain.name(),
            None,
            JournalsOf::AnyShard,
        ) {
            notes.push(format!(
                "removed the journal of a stale shard: {}",
                p.display()
            ));
        }
        Ok(notes)
    }

    /// The shard parts of (stage, domain), for `tracer status`: `None` when there are none,
    /// else a line such as `2 of 3 parts done (missing 1/3)`.
    pub fn shard_status(
        &self,
        stage: &dyn Stage,
        domain: &dyn Domain,
    ) -> Result<Option<String>, PipelineError> {
        if !stage.shardable() {
            return Ok(None);
        }
        let scan = shard::scan(&shard::parts_dir(
            &self.paths.output,
            stage.name(),
            domain.name(),
        ));
        if scan.parts.is_empty() && scan.foreign.is_empty() {
            return Ok(None);
        }
        let (_, table) = self.stage_config(stage)?;
        let fp = collect_inputs(self.paths, stage, domain.name(), &table)
            .ok()
            .map(|inputs| {
                fingerprint(
                    stage,
                    domain.name(),
                    &config::config_hash(&table),
                    self.seed,
                    &inputs,
                )
            });
        let mut counts: BTreeMap<u32, (Vec<u32>, usize)> = BTreeMap::new();
        for (s, path, manifest) in &scan.parts {
            let slot = counts.entry(s.count).or_default();
            let good = manifest.as_ref().is_some_and(|m| {
                Some(&m.fingerprint) == fp.as_ref() && m.shard == Some(*s) && is_complete(path)
            });
            if good {
                slot.0.push(s.index);
            } else {
                slot.1 += 1;
            }
        }
        let mut lines = Vec::new();
        for (count, (done, bad)) in counts {
            let missing: Vec<String> = (0..count)
                .filter(|i| !done.contains(i))
                .map(|i| format!("{i}/{count}"))
                .collect();
            let mut line = format!("{} of {count} parts done", done.len());
            if !missing.is_empty() {
                let shown = missing
                    .iter()
                    .take(8)
                    .cloned()
                    .collect::<Vec<_>>()
                    .join(", ");
                let more = missing.len().saturating_sub(8);
                line.push_str(&format!(
                    " (missing {shown}{})",
                    if more > 0 {
                        format!(" and {more} more")
                    } else {
                        String::new()
                    }
                ));
            }
            if bad > 0 {
                line.push_str(&format!(", {bad} stale or incomplete"));
            }
            if missing.is_empty() && bad == 0 {
                line.push_str(&format!(
                    "; `tracer merge {}` writes the output",
                    stage.name()
                ));
            }
            lines.push(line);
        }
        if !scan.foreign.is_empty() {
            lines.push(format!("{} foreign entries", scan.foreign.len()));
        }
        Ok(Some(lines.join("; ")))
    }
}
