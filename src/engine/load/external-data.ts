/**
 * External data: an ONNX graph whose weights lie beside it in `<file>_data` (and, when split,
 * `<file>_data_1`, `<file>_data_2`, …), as the hub's larger exports ship them. `config.json`
 * declares it in `transformers.js_config.use_external_data_format`: `true` (one chunk), a number
 * (that many chunks), or a map from a file name (`model_fp16.onnx`) or its base name (`model`)
 * to either. The names and the reading follow transformers.js 4.3.1 (utils/model-loader.js
 * `resolveExternalDataFormat` and `getExternalDataChunkNames`), so that what the engine checks,
 * fetches and caches is exactly what transformers.js then reads.
 */

/** transformers.js refuses more chunks than this (utils/hub/constants.js MAX_EXTERNAL_DATA_CHUNKS). */
export const MAX_EXTERNAL_DATA_CHUNKS = 100;

type ExternalData = boolean | number;

/** The `transformers.js_config.use_external_data_format` value of a parsed `config.json`, if any. */
export function externalDataFormat(config: unknown): ExternalData | Record<string, ExternalData> | null {
  if (typeof config !== 'object' || config === null) return null;
  const block = (config as Record<string, unknown>)['transformers.js_config'];
  if (typeof block !== 'object' || block === null) return null;
  const value = (block as Record<string, unknown>)['use_external_data_format'];
  if (typeof value === 'boolean' || typeof value === 'number') return value;
  if (typeof value === 'object' && value !== null) return value as Record<string, ExternalData>;
  return null;
}

/** How many `_data` chunks `onnxFile` (`model_fp16.onnx` or `onnx/model_fp16.onnx`) has. */
export function externalDataChunks(config: unknown, onnxFile: string): number {
  const format = externalDataFormat(config);
  if (!format) return 0;
  const fullName = onnxFile.slice(onnxFile.lastIndexOf('/') + 1);
  // The session's base name (`model`), as transformers.js keys it: the name less its dtype suffix.
  const baseName = fullName.replace(/(_fp16|_int8|_uint8|_quantized|_q4f16|_q4|_q2f16|_q2|_q1f16|_q1|_bnb4)?\.onnx$/, '');
  let chunks: number;
  if (typeof format === 'object') {
    if (Object.hasOwn(format, fullName)) chunks = +format[fullName]!;
    else if (Object.hasOwn(format, baseName)) chunks = +format[baseName]!;
    else chunks = 0;
  } else chunks = +format;
  if (!Number.isInteger(chunks) || chunks < 0) {
    throw new Error(`config.json transformers.js_config.use_external_data_format gives ${fullName} ${String(chunks)} chunks; expected a whole number from 0 to ${MAX_EXTERNAL_DATA_CHUNKS}.`);
  }
  if (chunks > MAX_EXTERNAL_DATA_CHUNKS) {
    throw new Error(`config.json transformers.js_config.use_external_data_format gives ${fullName} ${chunks} chunks, more than the ${MAX_EXTERNAL_DATA_CHUNKS} transformers.js reads.`);
  }
  return chunks;
}

/**
 * The external data files of `onnxFile`, in the same folder and form as it is given
 * (`onnx/model_fp16.onnx` → `onnx/model_fp16.onnx_data`, `onnx/model_fp16.onnx_data_1`, …).
 */
export function externalDataFiles(config: unknown, onnxFile: string): string[] {
  const chunks = externalDataChunks(config, onnxFile);
  return Array.from({ length: chunks }, (_, i) => `${onnxFile}_data${i === 0 ? '' : `_${i}`}`);
}
