/** The text the load pages' peers answer after (wllama-load.ts, pipeline-load.ts): the engine's decision's state and question (load.ts), as one prompt. */
export const PEER_STATE = 'The parcel arrived two weeks late and the box was crushed. Was it late?';
