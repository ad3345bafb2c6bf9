declare namespace tools {
  namespace memory {
    type Entity = {
      name: string;
      observations?: string[];
      children?: Entity[];
    };
    type Kind = "person" | "place" | {
      other?: string;
    };
    /** Create entities in the knowledge graph. */
    function create_entities(args: {
      entities: Entity[];
      kind?: Kind;
      meta?: Record<string, number>;
      remote?: unknown;
    }): Promise<ToolResult>;
  }
}
