/** What every tool call resolves to. */
interface ToolResult<T = unknown> {
  /** The text of the result's content blocks, joined with newlines. */
  text: string;
  /** The structured result (structuredContent), when the tool gives one. */
  structured?: T;
  /** True when the tool failed; text says why. */
  isError: boolean;
  /** The content blocks as the tool sent them (text, image, resource, …). */
  content: Array<{ type: string; text?: string; [key: string]: unknown }>;
}
/** Waits ms milliseconds (bounded by the program's time). */
declare function sleep(ms: number): Promise<void>;
declare namespace tools {
  /** Calls a tool by its public name. */
  function call(name: string, args?: Record<string, unknown>): Promise<ToolResult>;
  namespace _2fa {
    /** A server name starting with a digit. */
    function verify(args: {
      code: string;
    }): Promise<ToolResult>;
  }
  namespace call_ {
    /** A server named like tools.call. */
    function ring(args?: Record<string, unknown>): Promise<ToolResult>;
  }
  namespace github {
    /** Create a new issue in a GitHub repository. */
    function create_issue(args: {
      /** Repository owner */
      owner: string;
      repo: string;
      title: string;
      /** Labels to add */
      labels?: string[];
      state?: "open" | "closed";
      milestone?: number | null;
      assignee?: string | string[];
    }): Promise<ToolResult<{
      number: number;
      url: string;
    }>>;
    /**
     * Search code.
     * The query uses GitHub's syntax; a comment ends with *\/ in C.
     */
    function search(args: {
      /** The query *\/ with a comment end */
      q: string;
      "page-size"?: number;
    }): Promise<ToolResult>;
  }
  namespace local {
    /** A tool written in Go, with no server. */
    function local_clock(args?: {
      tz?: string;
    }): Promise<ToolResult>;
  }
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
  namespace my_server {
    /** Collides with get.thing once sanitized. */
    function get_thing(args?: Record<string, unknown>): Promise<ToolResult>;
    /** Dots and dashes become underscores. */
    function get_thing_2(args?: {
      id?: string;
    }): Promise<ToolResult>;
  }
}
