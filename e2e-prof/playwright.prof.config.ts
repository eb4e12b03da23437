import base from '../playwright.config.ts';
const extra = process.env.EXTRA ? process.env.EXTRA.split(' ') : [];
export default { ...base, use: { ...base.use, launchOptions: { ...base.use!.launchOptions, args: [...(base.use!.launchOptions!.args ?? []), ...extra] } } };
