import type { DeviceChoice, EngineStatus } from '../../protocol/engine-api.ts';
import type { WebGpuSupport } from './webgpu-probe.ts';

/** Why WebGPU is missing, in plain words, and how to get it. */
function WebGpuHelp({ support }: { support: Exclude<WebGpuSupport, { kind: 'available' }> }) {
  return (
    <div class="callout" data-testid="webgpu-help">
      <p>
        <strong>WebGPU is not available here.</strong>{' '}
        {support.kind === 'no-adapter'
          ? 'This browser knows WebGPU but found no graphics adapter it may use: the GPU may be on its blocklist, or hardware acceleration is switched off.'
          : support.secure
            ? 'This browser does not offer WebGPU, the web standard that lets a page compute on the graphics card.'
            : 'WebGPU only works on secure pages (https:// or localhost), and this page is not one.'}
      </p>
      <p>
        Everything still works: the model runs on the processor through WebAssembly (<em>wasm</em>). That is slower, especially
        for larger models; the small ones stay comfortable.
      </p>
      <details>
        <summary>How to enable WebGPU</summary>
        <ul>
          <li>Chrome or Edge 113 or newer on Windows, macOS and ChromeOS, and Chrome 121 or newer on Android, have it on by default.</li>
          <li>
            On Linux, open <code>chrome://flags</code>, enable <em>Unsafe WebGPU Support</em> and <em>Vulkan</em>, and restart the browser.
          </li>
          <li>Safari has it from Safari 26 (macOS, iOS and iPadOS 26); Firefox from version 141 on Windows.</li>
          <li>
            Check that hardware acceleration is on (Chrome: Settings → System → <em>Use graphics acceleration when available</em>) and
            that <code>chrome://gpu</code> lists WebGPU as enabled.
          </li>
        </ul>
      </details>
    </div>
  );
}

/** The device the model runs on, and the WebGPU adapter where there is one. */
export function DeviceInfo({ support, status, requested }: { support: WebGpuSupport | null; status: EngineStatus | null; requested: DeviceChoice }) {
  if (!support) return <p class="muted">Looking for a WebGPU adapter…</p>;
  if (support.kind !== 'available') return <WebGpuHelp support={support} />;
  const inUse = status?.device === 'webgpu';
  return (
    <dl class="facts" data-testid="webgpu-adapter">
      <dt>WebGPU adapter</dt>
      <dd>{status?.adapter ?? support.description}</dd>
      <dt>Half precision</dt>
      <dd>{support.shaderF16 ? 'supported (shader-f16): q4f16 and fp16 run here' : 'not supported: use q4, q8 or fp32'}</dd>
      {status && !inUse && (
        <>
          <dt>In use</dt>
          <dd>{requested === 'wasm' ? 'no: wasm was chosen for this model' : 'no: WebGPU failed for this model, so it runs on wasm'}</dd>
        </>
      )}
    </dl>
  );
}
