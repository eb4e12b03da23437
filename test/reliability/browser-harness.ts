// The reliability workload for the browser tests (e2e/reliability*.spec.ts, e2e/fuzz.spec.ts), bundled by
// e2e/reliability-support.ts and added (with the soak's request stream, scripts/soak/mix.ts) to the page as `window.jevReliability`.
import { malformedCases, PATHS, PROBE_CHAT, PROBE_DECISION } from './malformed.ts';
import { mixedJobs, serve } from './workload.ts';
import { facadeOf, runCampaign } from '../fuzz/campaign.ts';
import { PROBES } from '../fuzz/probes.ts';
import { soakStep, soakSteps } from '../../scripts/soak/mix.ts';
import { loneAnswers, storm } from './storm.ts';

Object.assign(globalThis, { jevReliability: { malformedCases, mixedJobs, serve, PATHS, PROBE_CHAT, PROBE_DECISION, fuzz: { runCampaign, facadeOf, PROBES }, soak: { soakStep, soakSteps }, storm, loneAnswers } });
