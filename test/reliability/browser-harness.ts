// The reliability workload for the browser tests (e2e/reliability*.spec.ts, e2e/fuzz.spec.ts), bundled by
// e2e/reliability-support.ts and added to the page as `window.jevReliability`.
import { malformedCases, PATHS, PROBE_CHAT, PROBE_DECISION } from './malformed.ts';
import { mixedJobs, serve } from './workload.ts';
import { runCampaign } from '../fuzz/campaign.ts';
import { PROBES } from '../fuzz/probes.ts';

Object.assign(globalThis, { jevReliability: { malformedCases, mixedJobs, serve, PATHS, PROBE_CHAT, PROBE_DECISION, fuzz: { runCampaign, PROBES } } });
