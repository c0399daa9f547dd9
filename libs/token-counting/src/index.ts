export * from "./token-counter";
