import { Type } from 'class-transformer';
import {
  ArrayMaxSize,
  ArrayMinSize,
  IsArray,
  IsNotEmpty,
  IsOptional,
  IsString,
  MaxLength,
  ValidateNested,
} from 'class-validator';

/** Limits on ingestion through the API (characters). */
export const INGEST_LIMITS = { documentsPerRequest: 200, documentChars: 2_000_000, uriChars: 1_000 } as const;

/** One document to load into the knowledge base; its `uri` identifies it (re-sending replaces its chunks). */
export class KnowledgeDocumentDto {
  @IsString() @IsNotEmpty() @MaxLength(INGEST_LIMITS.uriChars) uri!: string;
  @IsOptional() @IsString() @MaxLength(500) title?: string;
  @IsString() @IsNotEmpty() @MaxLength(INGEST_LIMITS.documentChars) text!: string;
}

/** Body of `POST /api/v1/projects/:projectId/knowledge`. */
export class IngestKnowledgeDto {
  @IsArray()
  @ArrayMinSize(1)
  @ArrayMaxSize(INGEST_LIMITS.documentsPerRequest)
  @ValidateNested({ each: true })
  @Type(() => KnowledgeDocumentDto)
  documents!: KnowledgeDocumentDto[];
}

export class InsightDto {
  @IsString() @IsNotEmpty() @MaxLength(200) id!: string;
  @IsString() @IsNotEmpty() @MaxLength(500) name!: string;
  @IsString() @MaxLength(20_000) description!: string;
}

export class RecommendationDto {
  @IsString() @IsNotEmpty() @MaxLength(200) id!: string;
  @IsString() @IsNotEmpty() @MaxLength(500) title!: string;
  @IsString() @MaxLength(20_000) body!: string;
}

/** Body of `POST /api/v1/projects/:projectId/insights`. */
export class IngestInsightsDto {
  @IsOptional()
  @IsArray()
  @ArrayMaxSize(5_000)
  @ValidateNested({ each: true })
  @Type(() => InsightDto)
  insights?: InsightDto[];

  @IsOptional()
  @IsArray()
  @ArrayMaxSize(5_000)
  @ValidateNested({ each: true })
  @Type(() => RecommendationDto)
  recommendations?: RecommendationDto[];
}
