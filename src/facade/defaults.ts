/** The model the playground and the library load when none is named. */
export const DEFAULT_MODEL = 'HuggingFaceTB/SmolLM2-135M-Instruct';
export const DEFAULT_HOST = 'https://huggingface.co';
