/**
 * The A2A 1.0 AgentCard in its JSON form, written from `specification/a2a.proto` (v1.0.0) with
 * the same general rules as `a2a-schema.ts` (REQUIRED means present and set; a REQUIRED list
 * holds at least one element, spec 5.7; strict objects). The security schemes are checked to
 * their REQUIRED fields; the OAuth flows only for holding one flow. (The canonicalization
 * example of spec 8.4.1 shows `"skills": []` and an empty description: it illustrates how
 * default values are written, not a valid card; spec 5.7 is the rule.)
 */
import { z } from 'zod';
import { always, requiredList, requiredString, struct, withRequired } from './a2a-schema.js';

// message AgentInterface
const AgentInterface = z.strictObject({
  url: requiredString('AgentInterface.url'),
  protocolBinding: requiredString('AgentInterface.protocol_binding'),
  tenant: z.string().optional(),
  protocolVersion: requiredString('AgentInterface.protocol_version'),
});

// message AgentProvider
const AgentProvider = z.strictObject({
  url: requiredString('AgentProvider.url'),
  organization: requiredString('AgentProvider.organization'),
});

// message AgentExtension: no field is REQUIRED.
const AgentExtension = z.strictObject({
  uri: z.string().optional(),
  description: z.string().optional(),
  required: z.boolean().optional(),
  params: struct.optional(),
});

// message AgentCapabilities
const AgentCapabilities = z.strictObject({
  streaming: z.boolean().optional(),
  pushNotifications: z.boolean().optional(),
  extensions: z.array(AgentExtension).optional(),
  extendedAgentCard: z.boolean().optional(),
});

// message SecurityRequirement { map<string, StringList> schemes = 1 }
const SecurityRequirement = z.strictObject({
  schemes: z.record(z.string(), z.strictObject({ list: z.array(z.string()).optional() })).optional(),
});

// message AgentSkill
const AgentSkill = z.strictObject({
  id: requiredString('AgentSkill.id'),
  name: requiredString('AgentSkill.name'),
  description: requiredString('AgentSkill.description'),
  tags: requiredList(z.string(), 'AgentSkill.tags'),
  examples: z.array(z.string()).optional(),
  inputModes: z.array(z.string()).optional(),
  outputModes: z.array(z.string()).optional(),
  securityRequirements: z.array(SecurityRequirement).optional(),
});

// message AgentCardSignature
const AgentCardSignature = z.strictObject({
  protected: requiredString('AgentCardSignature.protected'),
  signature: requiredString('AgentCardSignature.signature'),
  header: struct.optional(),
});

// message OAuthFlows { oneof flow { ... } }: each flow's own fields are not checked here.
const OAuthFlows = z
  .strictObject({
    authorizationCode: struct.optional(),
    clientCredentials: struct.optional(),
    implicit: struct.optional(),
    password: struct.optional(),
    deviceCode: struct.optional(),
  })
  .refine((flows) => Object.values(flows).filter((flow) => flow !== undefined).length === 1, {
    message: 'must hold exactly one flow (a2a.proto OAuthFlows.flow oneof)',
    ...always,
  });

// message SecurityScheme { oneof scheme { ... } }
const SecurityScheme = z
  .strictObject({
    apiKeySecurityScheme: z
      .strictObject({
        description: z.string().optional(),
        location: requiredString('APIKeySecurityScheme.location'),
        name: requiredString('APIKeySecurityScheme.name'),
      })
      .optional(),
    httpAuthSecurityScheme: z
      .strictObject({
        description: z.string().optional(),
        scheme: requiredString('HTTPAuthSecurityScheme.scheme'),
        bearerFormat: z.string().optional(),
      })
      .optional(),
    oauth2SecurityScheme: withRequired(
      z.strictObject({
        description: z.string().optional(),
        flows: OAuthFlows.optional(),
        oauth2MetadataUrl: z.string().optional(),
      }),
      {
        flows: 'OAuth2SecurityScheme.flows',
      },
    ).optional(),
    openIdConnectSecurityScheme: z
      .strictObject({
        description: z.string().optional(),
        openIdConnectUrl: requiredString('OpenIdConnectSecurityScheme.open_id_connect_url'),
      })
      .optional(),
    mtlsSecurityScheme: z.strictObject({ description: z.string().optional() }).optional(),
  })
  .refine((scheme) => Object.values(scheme).filter((member) => member !== undefined).length === 1, {
    message: 'must hold exactly one scheme (a2a.proto SecurityScheme.scheme oneof)',
    ...always,
  });

// message AgentCard
export const AgentCard = withRequired(
  z.strictObject({
    name: requiredString('AgentCard.name'),
    description: requiredString('AgentCard.description'),
    supportedInterfaces: requiredList(AgentInterface, 'AgentCard.supported_interfaces'),
    provider: AgentProvider.optional(),
    version: requiredString('AgentCard.version'),
    documentationUrl: z.string().optional(),
    capabilities: AgentCapabilities.optional(),
    securitySchemes: z.record(z.string(), SecurityScheme).optional(),
    securityRequirements: z.array(SecurityRequirement).optional(),
    defaultInputModes: requiredList(z.string(), 'AgentCard.default_input_modes'),
    defaultOutputModes: requiredList(z.string(), 'AgentCard.default_output_modes'),
    skills: requiredList(AgentSkill, 'AgentCard.skills'),
    signatures: z.array(AgentCardSignature).optional(),
    iconUrl: z.string().optional(),
  }),
  { capabilities: 'AgentCard.capabilities' },
);
