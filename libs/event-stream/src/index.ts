export * from "./ask-event-stream";
